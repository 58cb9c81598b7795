package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.context.annotation.ClassPathScanningCandidateComponentProvider;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.core.type.filter.AnnotationTypeFilter;
import org.springframework.util.ClassUtils;

/**
 * The auto-configuration's hints for a native image, as Spring AOT finds them (through aot.factories): every
 * {@code lease.*} properties class can be bound, and the metadata that refuses unknown keys is kept.
 */
class LeaseRuntimeHintsTest {

    private final RuntimeHints hints = new RuntimeHints();

    LeaseRuntimeHintsTest() {
        SpringFactoriesLoader.forResourceLocation("META-INF/spring/aot.factories")
                .load(RuntimeHintsRegistrar.class).forEach(registrar -> registrar.registerHints(hints, null));
    }

    @Test
    void everyPropertiesClassCanBeBound() throws ClassNotFoundException {
        ClassPathScanningCandidateComponentProvider scanner = new ClassPathScanningCandidateComponentProvider(false);
        scanner.addIncludeFilter(new AnnotationTypeFilter(ConfigurationProperties.class));
        List<String> types = scanner.findCandidateComponents("dev.lease.autoconfigure").stream()
                .map(BeanDefinition::getBeanClassName).toList();

        assertThat(types).contains(LeaseProperties.class.getName(), JdbcLeaseProperties.class.getName());
        for (String type : types) {
            assertThat(RuntimeHintsPredicates.reflection().onType(ClassUtils.forName(type, null))).as(type)
                    .accepts(hints);
        }
        assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(LeaseProperties.class, "setDefaultTtl"))
                .accepts(hints);
    }

    @Test
    void theMetadataThatRefusesUnknownKeysIsKept() {
        assertThat(RuntimeHintsPredicates.resource().forResource("META-INF/spring-configuration-metadata.json"))
                .accepts(hints);
    }
}
