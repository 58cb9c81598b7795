package dev.lease.autoconfigure;

import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;

import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.metamodel.EntityType;

import org.springframework.beans.factory.ListableBeanFactory;

/**
 * The JPA entities that keep fences in {@code lease_fence}: a {@code @FenceColumn} entity's delete leaves its row's
 * fence there as a tombstone, so such an application writes through the table although it never advances a row
 * itself. Loaded only where JPA is on the class path ({@link #PRESENT}).
 */
final class FencedEntityNames {

    /** The class whose presence makes {@link #in} safe to call. */
    static final String PRESENT = "jakarta.persistence.EntityManagerFactory";

    private FencedEntityNames() {
    }

    /** "entity Invoice (@FenceColumn)" for each fenced entity of every EntityManagerFactory already created. */
    static List<String> in(ListableBeanFactory beans) {
        List<String> found = new ArrayList<>();
        for (EntityManagerFactory factory : beans.getBeansOfType(EntityManagerFactory.class, false, false).values()) {
            for (EntityType<?> entity : factory.getMetamodel().getEntities()) {
                if (fenced(entity.getJavaType())) {
                    found.add("entity " + entity.getName() + " (@FenceColumn: its deletes keep tombstones there)");
                }
            }
        }
        return found;
    }

    private static boolean fenced(Class<?> type) {
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                for (var annotation : field.getAnnotations()) {
                    if (annotation.annotationType().getName().equals(JpaFenceAutoConfiguration.FENCE_COLUMN)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }
}
