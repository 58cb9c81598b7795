package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.json.BasicJsonParser;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.ClassPathResource;

/** The check behind unknown lease.* keys, on metadata of its own: maps, lists and arrays accept any key below them. */
class UnknownPropertiesTest {

    private final UnknownProperties demo = UnknownProperties.from("demo",
            List.of(new ClassPathResource("dev/lease/autoconfigure/demo-metadata.json")));

    UnknownPropertiesTest() throws Exception {
    }

    @Test
    void keysBelowMapsListsAndArraysAreKnownAndOnlyTheMisspeltOnesAreReported() {
        Map<String, Object> properties = new LinkedHashMap<>();
        properties.put("demo.name", "a");
        properties.put("demo.connectTimeout", "1s");
        properties.put("demo.labels.team", "x");
        properties.put("demo.labels[a.b]", "y");
        properties.put("demo.elections.billing.ttl", "30s");
        properties.put("demo.hosts[0]", "h");
        properties.put("demo.ports", "1,2");
        properties.put("other.nmae", "ignored: another prefix");
        properties.put("demo.nmae", "b");
        properties.put("demo.election.billing.ttl", "30s");
        List<UnknownProperties.Unknown> unknown = demo.find(environment(new MapPropertySource("app", properties)));
        assertThat(unknown).extracting(u -> u.name().toString())
                .containsExactly("demo.nmae", "demo.election.billing.ttl");
        assertThat(unknown.get(0).closest()).isEqualTo("demo.name");
        assertThat(unknown.get(0).origin()).contains("\"demo.nmae\"").contains("\"app\"");
        assertThat(unknown.get(0).environmentVariable()).isFalse();
    }

    @Test
    void environmentVariablesAreKnownInBothFormsBootBindsAndTheCorrectFormIsSuggested() {
        Map<String, Object> variables = Map.of("DEMO_CONNECTTIMEOUT", "1s", "DEMO_CONNECT_TIMEOUT", "1s",
                "DEMO_LABELS_TEAM", "x", "DEMO_CONECTTIMEOUT", "1s");
        List<UnknownProperties.Unknown> unknown = demo.find(environment(new SystemEnvironmentPropertySource(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables)));
        assertThat(unknown).singleElement().satisfies(u -> {
            assertThat(u.name()).hasToString("demo.conecttimeout");
            assertThat(u.environmentVariable()).isTrue();
            assertThat(u.closest()).isEqualTo("demo.connect-timeout");
            assertThat(u.closestAsEnvironmentVariable()).isEqualTo("DEMO_CONNECTTIMEOUT");
        });
    }

    /**
     * System properties and environment variables are not the application's own; a name the application's own
     * configuration also sets is reported from there, even below a source of higher precedence.
     */
    @Test
    void eachNameIsReportedWithWhoseSourceSetsIt() {
        StandardEnvironment environment = new StandardEnvironment();
        MutablePropertySources sources = environment.getPropertySources();
        sources.replace(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME, new MapPropertySource(
                StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME,
                Map.of("demo.version", "1.2", "demo.nmae", "from -D")));
        sources.replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, new SystemEnvironmentPropertySource(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, Map.of("DEMO_PORT", "tcp://10.0.0.7:80")));
        sources.addLast(new MapPropertySource("app", Map.of("demo.nmae", "from a file", "demo.hosst", "h")));
        assertThat(demo.find(environment)).extracting(u -> u.name().toString(), UnknownProperties.Unknown::source)
                .containsExactlyInAnyOrder(tuple("demo.version", UnknownProperties.Source.SYSTEM_PROPERTIES),
                        tuple("demo.nmae", UnknownProperties.Source.APPLICATION),
                        tuple("demo.port", UnknownProperties.Source.ENVIRONMENT_VARIABLES),
                        tuple("demo.hosst", UnknownProperties.Source.APPLICATION));
        assertThat(demo.find(environment)).filteredOn(u -> u.name().toString().equals("demo.nmae")).singleElement()
                .satisfies(u -> assertThat(u.origin()).contains("\"app\""));
    }

    @Test
    void withoutMetadataForThePrefixNothingCanBeJudged() throws Exception {
        assertThat(demo.knowsAnyProperty()).isTrue();
        assertThat(UnknownProperties.from("lease", List.of(new ClassPathResource(
                "dev/lease/autoconfigure/demo-metadata.json"))).knowsAnyProperty()).isFalse();
    }

    /** The JSON parser of an application without Jackson or Gson, such as the quickstart sample. */
    @Test
    void theMetadataReadsTheSameWithSpringBootsBasicJsonParser() throws Exception {
        UnknownProperties basic = UnknownProperties.from("demo",
                List.of(new ClassPathResource("dev/lease/autoconfigure/demo-metadata.json")), new BasicJsonParser());
        Map<String, Object> properties = Map.of("demo.name", "a", "demo.labels.team", "x", "demo.hosts[0]", "h",
                "demo.ports", "1", "demo.nmae", "b");
        assertThat(basic.find(environment(new MapPropertySource("app", properties))))
                .extracting(u -> u.name().toString()).containsExactly("demo.nmae");
    }

    @Test
    void aSwapOfTwoLettersIsOneEdit() {
        assertThat(UnknownProperties.distance("lease.backedn", "lease.backend")).isEqualTo(1);
        assertThat(UnknownProperties.distance("lease.zookeeper.conect-string", "lease.zookeeper.connect-string"))
                .isEqualTo(1);
        assertThat(UnknownProperties.distance("", "abc")).isEqualTo(3);
    }

    private static StandardEnvironment environment(org.springframework.core.env.PropertySource<?> source) {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().remove(StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME);
        environment.getPropertySources().remove(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME);
        environment.getPropertySources().addFirst(source);
        return environment;
    }
}
