package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.core.io.support.SpringFactoriesLoader;

import dev.lease.LeaseConfigurationException;

class SpringBootVersionCheckTest {

    @ParameterizedTest
    @ValueSource(strings = {"3.5.7", "3.0.0", "2.7.18"})
    void olderSpringBootIsRefusedNamingTheSupportedVersions(String version) {
        assertThatThrownBy(() -> SpringBootVersionCheck.check(version))
                .isInstanceOf(LeaseConfigurationException.class)
                .hasMessageContaining("Spring Boot " + version)
                .hasMessageContaining("Spring Boot 4.0 and 4.1")
                .satisfies(ex -> assertThat(((LeaseConfigurationException) ex).action())
                        .contains("upgrade the application to Spring Boot 4.0"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"4.0.7", "4.1.2", "4.2.0-SNAPSHOT", "5.0.0", "unknown", " "})
    void supportedOrUnknownVersionsPass(String version) {
        assertThatCode(() -> SpringBootVersionCheck.check(version)).doesNotThrowAnyException();
        assertThatCode(() -> SpringBootVersionCheck.check(null)).doesNotThrowAnyException();
    }

    @Test
    void everySpringApplicationRunsTheCheckBeforeAnyAutoConfiguration() {
        assertThat(SpringFactoriesLoader.forDefaultResourceLocation().load(ApplicationContextInitializer.class))
                .anyMatch(SpringBootVersionCheck.class::isInstance);
        assertThat(new SpringApplication(Object.class).getInitializers())
                .anyMatch(SpringBootVersionCheck.class::isInstance);
    }
}
