package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * The values users write bind to the backends' own enums and to Boot's {@code DatabaseInitializationMode} as they bound
 * to the starter's former copies of them: any case, dashes or underscores, in files and environment variables alike.
 */
class PropertiesBindingTest {

    @ParameterizedTest
    @CsvSource({"embedded, EMBEDDED", "always, ALWAYS", "never, NEVER", "Never, NEVER", "ALWAYS, ALWAYS"})
    void initializeSchemaTakesBootsModes(String written, String mode) {
        assertThat(bind(JdbcLeaseProperties.class, "lease.jdbc", Map.of("lease.jdbc.initialize-schema", written))
                .getInitializeSchema().name()).isEqualTo(mode);
        assertThat(bind(JdbcFenceProperties.class, "lease.fence", Map.of("lease.fence.initialize-schema", written))
                .getInitializeSchema().name()).isEqualTo(mode);
    }

    @ParameterizedTest
    @CsvSource({"per-name, PER_NAME", "PER_NAME, PER_NAME", "per_name, PER_NAME", "shared, SHARED", "Shared, SHARED"})
    void jdbcTokensTakeTheBackendsOwnEnum(String written, String tokens) {
        assertThat(bind(JdbcLeaseProperties.class, "lease.jdbc", Map.of("lease.jdbc.token", written)).getToken()
                .name()).isEqualTo(tokens);
    }

    @ParameterizedTest
    @CsvSource({"version, VERSION", "zxid, ZXID", "ZXID, ZXID"})
    void zooKeeperTokensTakeTheBackendsOwnEnum(String written, String source) {
        assertThat(bind(ZooKeeperLeaseProperties.class, "lease.zookeeper", Map.of("lease.zookeeper.token", written))
                .getToken().name()).isEqualTo(source);
    }

    @ParameterizedTest
    @CsvSource({"30s, 30000", "500ms, 500", "2m, 120000", "PT1H, 3600000", "1500, 1500"})
    void durationsAreWrittenAsBootWritesThem(String written, long millis) {
        assertThat(bind(ZooKeeperLeaseProperties.class, "lease.zookeeper",
                Map.of("lease.zookeeper.delete-idle-after", written)).getDeleteIdleAfter())
                .isEqualTo(Duration.ofMillis(millis));
    }

    @Test
    void environmentVariablesBindAsInAPod() {
        StandardEnvironment environment = new StandardEnvironment();
        environment.getPropertySources().replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                        Map.of("LEASE_JDBC_INITIALIZESCHEMA", "never", "LEASE_JDBC_TOKEN", "shared",
                                "LEASE_ZOOKEEPER_TOKEN", "zxid")));
        Binder binder = new Binder(ConfigurationPropertySources.get(environment));
        JdbcLeaseProperties jdbc = binder.bindOrCreate("lease.jdbc", JdbcLeaseProperties.class);
        assertThat(jdbc.getInitializeSchema().name()).isEqualTo("NEVER");
        assertThat(jdbc.getToken().name()).isEqualTo("SHARED");
        assertThat(binder.bindOrCreate("lease.zookeeper", ZooKeeperLeaseProperties.class).getToken().name())
                .isEqualTo("ZXID");
    }

    private static <T> T bind(Class<T> type, String prefix, Map<String, String> values) {
        return new Binder(new MapConfigurationPropertySource(values)).bindOrCreate(prefix, Bindable.of(type));
    }
}
