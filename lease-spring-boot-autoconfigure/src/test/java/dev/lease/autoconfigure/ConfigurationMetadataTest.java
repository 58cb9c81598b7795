package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.json.JsonParser;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

/**
 * The starter's configuration metadata, which IDEs complete from and {@link LeasePropertyNamesCheck} judges keys by.
 * Boot's configuration processor takes each description from the javadoc of a properties class's field, and doclint
 * does not look at fields: this is what keeps every property described.
 */
class ConfigurationMetadataTest {

    private final JsonParser json = JsonParserFactory.getJsonParser();

    @Test
    void everyLeasePropertyHasADescription() throws Exception {
        Map<String, Map<?, ?>> properties = leaseProperties();
        assertThat(properties).hasSizeGreaterThan(30);
        assertThat(properties.values()).allSatisfy(property -> assertThat(property.get("description"))
                .as("description of %s", property.get("name")).asString().isNotBlank());
    }

    /** Defaults that come from enum constants and durations, which the processor reads from the field initializers. */
    @Test
    void defaultsAreDeclared() throws Exception {
        Map<String, Map<?, ?>> properties = leaseProperties();
        assertThat(properties.get("lease.default-ttl").get("defaultValue")).isEqualTo("30s");
        assertThat(properties.get("lease.zookeeper.token").get("defaultValue")).isEqualTo("version");
        assertThat(properties.get("lease.zookeeper.session-timeout").get("defaultValue")).isEqualTo("30s");
        assertThat(properties.get("lease.jdbc.token").get("defaultValue")).isEqualTo("per-name");
        assertThat(properties.get("lease.jdbc.initialize-schema").get("defaultValue")).isEqualTo("embedded");
        assertThat(properties.get("lease.fence.initialize-schema").get("defaultValue")).isEqualTo("embedded");
        assertThat(properties.get("lease.fence.idle-timeout").get("defaultValue")).isEqualTo("60s");
        assertThat(properties.get("lease.jdbc.datasource.pool").get("defaultValue")).isEqualTo("own");
        assertThat(properties.get("lease.jdbc.datasource.connection-timeout").get("defaultValue")).isEqualTo("500ms");
        assertThat(properties.get("lease.health.timeout").get("defaultValue")).isEqualTo("2s");
    }

    /** The backend ids IDEs offer are those of {@link BackendType}, which owns them. */
    @Test
    void theBackendHintsNameEveryBackendAndNothingElse() throws Exception {
        Map<String, List<String>> hints = new LinkedHashMap<>();
        for (Map<String, Object> document : documents()) {
            for (Map<?, ?> hint : list(document.get("hints"))) {
                List<String> values = new ArrayList<>();
                list(hint.get("values")).forEach(value -> values.add((String) value.get("value")));
                hints.put((String) hint.get("name"), values);
            }
        }
        assertThat(hints.get("lease.backend")).containsExactlyElementsOf(BackendType.ids());
        assertThat(hints.get("lease.efficiency-backend")).containsExactlyElementsOf(BackendType.ids());
        assertThat(hints.get("lease.correctness-backend")).isSubsetOf(BackendType.ids()).doesNotContain("redis",
                "redlock");
    }

    private Map<String, Map<?, ?>> leaseProperties() throws Exception {
        Map<String, Map<?, ?>> properties = new LinkedHashMap<>();
        for (Map<String, Object> document : documents()) {
            for (Map<?, ?> property : list(document.get("properties"))) {
                if (property.get("name") instanceof String name && name.startsWith("lease.")) {
                    properties.put(name, property);
                }
            }
        }
        return properties;
    }

    /** This module's metadata, generated and additional; not that of the other jars on the classpath. */
    private List<Map<String, Object>> documents() throws Exception {
        List<Map<String, Object>> documents = new ArrayList<>();
        PathMatchingResourcePatternResolver resolver = new PathMatchingResourcePatternResolver();
        for (String file : List.of("spring-configuration-metadata.json", "additional-spring-configuration-metadata.json")) {
            for (Resource resource : resolver.getResources("classpath*:META-INF/" + file)) {
                String content = resource.getContentAsString(StandardCharsets.UTF_8);
                if (content.contains("\"lease.backend\"")) {
                    documents.add(json.parseMap(content));
                }
            }
        }
        assertThat(documents).as("generated and additional metadata").hasSize(2);
        return documents;
    }

    private static List<Map<?, ?>> list(Object value) {
        List<Map<?, ?>> maps = new ArrayList<>();
        if (value instanceof List<?> list) {
            list.forEach(entry -> maps.add((Map<?, ?>) entry));
        }
        return maps;
    }
}
