package dev.lease.autoconfigure;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.boot.json.JsonParser;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

/**
 * Finds the names under one prefix that no configuration metadata declares: misspelt keys, which Spring Boot would
 * otherwise ignore without a word. The known names are those of every {@code META-INF/spring-configuration-metadata.json}
 * on the classpath (the metadata IDEs complete from). Names are compared as the binder compares them (any relaxed
 * form, environment variables included), and a property of a map, collection or array type accepts any name below it.
 */
final class UnknownProperties {

    static final String METADATA = "classpath*:META-INF/spring-configuration-metadata.json";

    private static final List<String> ANY_KEY_BELOW = List.of("java.util.Map", "java.util.List", "java.util.Set",
            "java.util.Collection", "java.util.Properties");

    private final ConfigurationPropertyName prefix;
    private final List<Known> known;

    private UnknownProperties(ConfigurationPropertyName prefix, List<Known> known) {
        this.prefix = prefix;
        this.known = known;
    }

    /** The names under {@code prefix} declared by the metadata on {@code classLoader}'s classpath. */
    static UnknownProperties fromClasspath(String prefix, ClassLoader classLoader) throws IOException {
        return from(prefix, List.of(new PathMatchingResourcePatternResolver(classLoader).getResources(METADATA)));
    }

    /** The names under {@code prefix} declared by the given metadata files. */
    static UnknownProperties from(String prefix, List<Resource> metadata) throws IOException {
        return from(prefix, metadata, JsonParserFactory.getJsonParser());
    }

    static UnknownProperties from(String prefix, List<Resource> metadata, JsonParser json) throws IOException {
        ConfigurationPropertyName root = ConfigurationPropertyName.of(prefix);
        List<Known> known = new ArrayList<>();
        for (Resource resource : metadata) {
            String content = resource.getContentAsString(StandardCharsets.UTF_8);
            // Most files on a classpath are other libraries' and large: parse only those that mention the prefix.
            if (!content.contains("\"" + prefix)) {
                continue;
            }
            Map<String, Object> document = json.parseMap(content);
            for (Map<?, ?> group : entries(document, "groups", json)) {
                add(known, root, group, false);
            }
            for (Map<?, ?> property : entries(document, "properties", json)) {
                add(known, root, property, true);
            }
        }
        return new UnknownProperties(root, known);
    }

    /** Whether the metadata declares any property under the prefix; without it, every name would look unknown. */
    boolean knowsAnyProperty() {
        return known.stream().anyMatch(Known::property);
    }

    /**
     * The names under the prefix in {@code environment} that no metadata declares, each once: where the application's
     * own configuration sets it with the highest precedence, else where it is set with the highest precedence. Property
     * sources that cannot list their names are not looked at.
     */
    List<Unknown> find(Environment environment) {
        Map<ConfigurationPropertyName, Unknown> unknown = new LinkedHashMap<>();
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (!(source instanceof IterableConfigurationPropertySource iterable)) {
                continue;
            }
            Source kind = Source.of(source.getUnderlyingSource());
            boolean environmentVariables = kind == Source.ENVIRONMENT_VARIABLES;
            iterable.stream().filter(prefix::isAncestorOf).filter(name -> !isKnown(name, environmentVariables))
                    .forEach(name -> unknown.merge(name,
                            new Unknown(name, origin(source, name), closest(name, environmentVariables), kind),
                            (earlier, later) -> earlier.source().applicationOwned() || !later.source().applicationOwned()
                                    ? earlier : later));
        }
        return List.copyOf(unknown.values());
    }

    private boolean isKnown(ConfigurationPropertyName name, boolean environmentVariable) {
        for (Known k : known) {
            if (k.matches(k.name(), name) || (environmentVariable && k.matches(k.legacyEnvironmentName(), name))) {
                return true;
            }
        }
        return false;
    }

    private @Nullable String closest(ConfigurationPropertyName name, boolean environmentVariable) {
        String candidate = name.toString();
        return known.stream().filter(Known::property)
                .min(Comparator.comparingInt((Known k) -> Math.min(distance(candidate, k.name().toString()),
                        environmentVariable ? distance(candidate, k.legacyEnvironmentName().toString())
                                : Integer.MAX_VALUE)))
                .map(k -> k.name().toString()).orElse(null);
    }

    private static String origin(ConfigurationPropertySource source, ConfigurationPropertyName name) {
        ConfigurationProperty property = source.getConfigurationProperty(name);
        if (property != null && property.getOrigin() != null) {
            return property.getOrigin().toString();
        }
        return source.getUnderlyingSource() instanceof PropertySource<?> propertySource
                ? "property source \"" + propertySource.getName() + "\"" : String.valueOf(source);
    }

    /** Edit distance counting a swap of two neighbouring characters as one edit (optimal string alignment). */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) {
            d[i][0] = i;
        }
        for (int j = 0; j <= b.length(); j++) {
            d[0][j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }

    private static List<Map<?, ?>> entries(Map<String, Object> document, String key, JsonParser json) {
        List<Map<?, ?>> entries = new ArrayList<>();
        if (document.get(key) instanceof List<?> list) {
            for (Object entry : list) {
                if (entry instanceof Map<?, ?> map) {
                    entries.add(map);
                }
                // Boot's BasicJsonParser, used when neither Jackson nor Gson is present, leaves every object of a
                // list but the first as text.
                else if (entry instanceof String text && text.trim().startsWith("{")) {
                    entries.add(json.parseMap(text.trim()));
                }
            }
        }
        return entries;
    }

    private static void add(List<Known> known, ConfigurationPropertyName root, Map<?, ?> entry, boolean property) {
        ConfigurationPropertyName name = entry.get("name") instanceof String text
                ? ConfigurationPropertyName.ofIfValid(text) : null;
        if (name == null || !(root.equals(name) || root.isAncestorOf(name))) {
            return;
        }
        String type = entry.get("type") instanceof String text ? text : null;
        boolean anyKeyBelow = property && type != null
                && (type.endsWith("[]") || ANY_KEY_BELOW.stream().anyMatch(type::startsWith));
        // Boot also binds LEASE_A_B_C to lease.a.b-c: listed as lease.a.b.c, it must count as known.
        ConfigurationPropertyName legacy = ConfigurationPropertyName.of(name.toString().replace('-', '.'));
        known.add(new Known(name, legacy, property, anyKeyBelow));
    }

    private record Known(ConfigurationPropertyName name, ConfigurationPropertyName legacyEnvironmentName,
            boolean property, boolean anyKeyBelow) {

        boolean matches(ConfigurationPropertyName declared, ConfigurationPropertyName candidate) {
            return declared.equals(candidate) || (anyKeyBelow && declared.isAncestorOf(candidate));
        }
    }

    /**
     * A name no metadata declares.
     *
     * @param name the name, in its canonical form
     * @param origin where it is set, such as a line of application.yml or an environment variable
     * @param closest the declared property closest to it in edit distance, or null when none is declared
     * @param source the kind of property source it comes from
     */
    record Unknown(ConfigurationPropertyName name, String origin, @Nullable String closest, Source source) {

        /** Whether it comes from an environment variable. */
        boolean environmentVariable() {
            return source == Source.ENVIRONMENT_VARIABLES;
        }

        /** {@code closest} spelt as the environment variable Spring Boot documents for it. */
        @Nullable String closestAsEnvironmentVariable() {
            return closest == null ? null : closest.replace(".", "_").replace("-", "").toUpperCase(Locale.ROOT);
        }
    }

    /** Whose a property source is: the application's own configuration, or the process's surroundings. */
    enum Source {

        /** Configuration files, command-line arguments, test properties: what the application itself sets. */
        APPLICATION,

        /**
         * JVM system properties, which also carry what a launcher passes on to every JVM it starts (Maven's
         * {@code -D} options reach every test JVM through Surefire).
         */
        SYSTEM_PROPERTIES,

        /**
         * Environment variables, which the platform sets for every process (Kubernetes gives every pod of a namespace
         * {@code LEASE_PORT}, {@code LEASE_SERVICE_HOST}... for a service named {@code lease}).
         */
        ENVIRONMENT_VARIABLES;

        static Source of(Object propertySource) {
            if (propertySource instanceof SystemEnvironmentPropertySource) {
                return ENVIRONMENT_VARIABLES;
            }
            return propertySource instanceof PropertySource<?> source
                    && StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME.equals(source.getName())
                            ? SYSTEM_PROPERTIES : APPLICATION;
        }

        boolean applicationOwned() {
            return this == APPLICATION;
        }
    }
}
