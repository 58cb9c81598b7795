package dev.lease.autoconfigure;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.SpringBootVersion;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;

import dev.lease.LeaseConfigurationException;

/**
 * Refuses to start on a Spring Boot older than 4.0 with a message that says so. Without it, an application on
 * Boot 3 would fail later and misleadingly: Boot 4 moved the classes the backend auto-configurations test for, so
 * every backend would look absent. Registered in {@code META-INF/spring.factories}, which Boot 3 reads as well, and
 * uses only types that Boot 3 has.
 */
class SpringBootVersionCheck implements ApplicationContextInitializer<ConfigurableApplicationContext> {

    static final String SUPPORTED = "Spring Boot 4.0 and 4.1";

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        check(SpringBootVersion.getVersion());
    }

    /** @param version the running Spring Boot's version; null when unknown (a repackaged jar), which passes */
    static void check(@Nullable String version) {
        if (version == null || version.isBlank()) {
            return;
        }
        int major = major(version);
        if (major >= 0 && major < 4) {
            throw new LeaseConfigurationException("The lease starter runs on " + SUPPORTED + ", but this "
                    + "application runs Spring Boot " + version + ".",
                    "upgrade the application to Spring Boot 4.0 or later, or remove lease-spring-boot-starter.");
        }
    }

    private static int major(String version) {
        int dot = version.indexOf('.');
        try {
            return Integer.parseInt(dot < 0 ? version : version.substring(0, dot));
        }
        catch (NumberFormatException ex) {
            return -1;
        }
    }
}
