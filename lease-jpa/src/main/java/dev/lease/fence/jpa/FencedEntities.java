package dev.lease.fence.jpa;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.hibernate.boot.Metadata;
import org.hibernate.mapping.PersistentClass;
import org.hibernate.mapping.Property;

import dev.lease.LeaseConfigurationException;

/**
 * Finds the entities with a {@link FenceColumn} in the boot model and checks each one, so that a mapping the fence
 * cannot serve fails the startup instead of a write.
 */
final class FencedEntities {

    private FencedEntities() {
    }

    /** The fenced entities of a model: entity name to the name of its fence property, and their classes. */
    record Found(Map<String, String> properties, Set<Class<?>> classes) {
    }

    static Found scan(Metadata metadata) {
        Map<String, String> fenced = new LinkedHashMap<>();
        Set<Class<?>> classes = new HashSet<>();
        for (PersistentClass entity : metadata.getEntityBindings()) {
            Class<?> type = entity.getMappedClass();
            if (type == null) {
                continue;
            }
            List<Field> fields = fenceFields(type);
            if (fields.isEmpty()) {
                continue;
            }
            String name = entity.getJpaEntityName() == null ? entity.getEntityName() : entity.getJpaEntityName();
            check(entity, name, fields);
            fenced.put(entity.getEntityName(), fields.get(0).getName());
            classes.add(type);
        }
        return new Found(fenced, classes);
    }

    private static List<Field> fenceFields(Class<?> type) {
        List<Field> fields = new ArrayList<>();
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                if (field.isAnnotationPresent(FenceColumn.class)) {
                    fields.add(field);
                }
            }
        }
        return fields;
    }

    private static void check(PersistentClass entity, String name, List<Field> fields) {
        Field field = fields.get(0);
        String where = "entity " + name + " (" + entity.getMappedClass().getName() + ")";
        if (fields.size() > 1) {
            throw new LeaseConfigurationException(where + " has " + fields.size() + " @FenceColumn fields: "
                    + fields.stream().map(f -> f.getDeclaringClass().getSimpleName() + "." + f.getName()).toList()
                    + ". A row has one fence.", "keep @FenceColumn on one long field of " + name);
        }
        String fieldName = field.getDeclaringClass().getSimpleName() + "." + field.getName();
        if (field.getType() != long.class && field.getType() != Long.class) {
            throw new LeaseConfigurationException("@FenceColumn on field " + fieldName + " of " + where + " is a "
                    + field.getType().getName() + "; a fence holds a fencing token, a long.",
                    "declare " + fieldName + " as long (or Long), mapped to a BIGINT column");
        }
        Property property = persistentProperty(entity, field.getName());
        if (property == null) {
            throw new LeaseConfigurationException("@FenceColumn field " + fieldName + " of " + where + " is not a "
                    + "persistent attribute (transient, or the entity uses property access).",
                    "map " + fieldName + " as a basic column of the entity");
        }
        if (property.getColumnSpan() != 1 || property.getValue().getTable() != entity.getRootTable()) {
            throw new LeaseConfigurationException("@FenceColumn field " + fieldName + " of " + where + " is not one "
                    + "column of the entity's root table " + entity.getRootTable().getName() + ".",
                    "declare the fence on the root entity of the hierarchy, as one BIGINT column");
        }
        if (entity.getIdentifier() == null || entity.getIdentifier().getColumnSpan() != 1) {
            throw new LeaseConfigurationException(where + " has a @FenceColumn (" + fieldName + ") and a composite "
                    + "id; the fence reads the row by a single-column id.",
                    "give " + name + " a single-column id, or fence its table with JdbcFence.table(...)");
        }
        if (entity.useDynamicUpdate()) {
            throw new LeaseConfigurationException(where + " has a @FenceColumn (" + fieldName + ") and "
                    + "@DynamicUpdate, whose updates leave out the fence column when only other columns changed.",
                    "remove @DynamicUpdate from " + name);
        }
    }

    private static Property persistentProperty(PersistentClass entity, String name) {
        for (Property property : entity.getPropertyClosure()) {
            if (property.getName().equals(name)) {
                return property;
            }
        }
        return null;
    }
}
