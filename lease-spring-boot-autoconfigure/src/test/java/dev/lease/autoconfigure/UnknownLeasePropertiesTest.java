package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import dev.lease.LeaseConfigurationException;

/**
 * A misspelt {@code lease.*} key in the application's own configuration fails the startup, naming itself and the known
 * key it was probably meant to be; one in system properties or environment variables is logged with the same advice.
 */
@ExtendWith(OutputCaptureExtension.class)
class UnknownLeasePropertiesTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ZooKeeperLeaseConfiguration.class,
                    InMemoryLeaseConfiguration.class, LeaseAutoConfiguration.class));

    @Test
    void aMisspeltTopLevelKeyFailsNamingTheClosestKnownKey() {
        runner.withPropertyValues("lease.backend=in-memory", "lease.default-tll=10s").run(context -> {
            LeaseConfigurationException failure = leaseFailure(context);
            assertThat(failure.description()).contains("'lease.default-tll'").contains("'lease.default-ttl'");
            assertThat(failure.action()).contains("lease.default-ttl").contains("lease.ignore-unknown-properties");
        });
    }

    /** Without the check the backend is then picked implicitly, or none is found. */
    @Test
    void aMisspeltBackendKeyIsReportedRatherThanTheBackendChoice() {
        runner.withPropertyValues("lease.backedn=in-memory").run(context -> assertThat(leaseFailure(context)
                .description()).contains("'lease.backedn'").contains("'lease.backend'")
                .doesNotContain("No lease backend is available"));
    }

    /** Today's symptom: "add curator-framework", although Curator is on the classpath. */
    @Test
    void aMisspeltNestedKeyIsReportedRatherThanAMissingClient() {
        runner.withPropertyValues("lease.backend=zookeeper", "lease.zookeeper.conect-string=127.0.0.1:2181")
                .run(context -> {
                    LeaseConfigurationException failure = leaseFailure(context);
                    assertThat(failure.description()).contains("'lease.zookeeper.conect-string'")
                            .contains("'lease.zookeeper.connect-string'").doesNotContain("curator-framework");
                });
    }

    @Test
    void everyUnknownKeyIsListedWithWhereItComesFrom() {
        runner.withPropertyValues("lease.backend=in-memory", "lease.redis.key-prefx=x:", "lease.jdbc.tabel=t")
                .run(context -> assertThat(leaseFailure(context).description())
                        .contains("'lease.redis.key-prefx'", "'lease.redis.key-prefix'")
                        .contains("'lease.jdbc.tabel'", "'lease.jdbc.table'")
                        .contains("property source \"test\""));
    }

    @Test
    void relaxedFormsOfKnownKeysAreKnown() {
        runner.withPropertyValues("lease.backend=in-memory", "lease.defaultTtl=20s", "lease.renew_every=5s",
                        "lease.Redis.KEY-PREFIX=x:", "lease.redis.keyprefix=y:")
                .withInitializer(context -> environmentVariables(context.getEnvironment(),
                        Map.of("LEASE_FENCE_INITIALIZESCHEMA", "never", "LEASE_ZOOKEEPER_SESSION_TIMEOUT", "20s",
                                "LEASE_ZOOKEEPER_ROOT", "/x")))
                .run(context -> assertThat(context).hasNotFailed());
    }

    /** Environment variables are not the application's own configuration: logged, with the same advice. */
    @Test
    void aMisspeltEnvironmentVariableIsNamedAsSuchWithItsCorrectSpelling(CapturedOutput output) {
        runner.withPropertyValues("lease.backend=in-memory")
                .withInitializer(context -> environmentVariables(context.getEnvironment(),
                        Map.of("LEASE_ZOOKEEPER_CONECTSTRING", "127.0.0.1:2181")))
                .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("WARN").contains("LEASE_ZOOKEEPER_CONECTSTRING")
                .contains("'lease.zookeeper.connect-string'")
                .contains("rename the environment variable to LEASE_ZOOKEEPER_CONNECTSTRING");
    }

    /**
     * Maven passes {@code -Dlease.version} on to every test JVM; Kubernetes gives every pod of a namespace
     * {@code LEASE_PORT} and {@code LEASE_SERVICE_HOST} for a service named {@code lease}. The application starts,
     * and one warning names them with the advice a misspelt key gets.
     */
    @Test
    void keysSetOutsideTheApplicationAreLoggedOnceAndTheApplicationStarts(CapturedOutput output) {
        withSystemProperty("lease.version", "1.2.3", () -> {
            SpringApplication application = application(Map.of("LEASE_PORT", "tcp://10.96.0.7:80",
                    "LEASE_SERVICE_HOST", "10.96.0.7"));
            application.run("--lease.backend=in-memory").close();
        });
        String warning = warning(output);
        assertThat(warning).contains("WARN").contains("'lease.version'").contains("\"systemProperties\"")
                .contains("'lease.port'").contains("LEASE_PORT").contains("LEASE_SERVICE_HOST")
                .contains("the closest known property is").contains("rename each to the known property");
        assertThat(output.getOut().split("Only logged", -1)).as("logged once").hasSize(2);
    }

    /** The same keys from outside do not hide, nor join, a misspelt key of the application's configuration file. */
    @Test
    void aMisspeltKeyInTheConfigurationFileStillFailsTheStartup(CapturedOutput output) {
        withSystemProperty("lease.version", "1.2.3", () -> {
            SpringApplication application = application(Map.of("LEASE_PORT", "tcp://10.96.0.7:80"));
            assertThatThrownBy(() -> application.run(
                    "--spring.config.location=classpath:/dev/lease/autoconfigure/misspelt-lease-key.yml").close())
                    .satisfies(failure -> assertThat(leaseFailure(failure).description())
                            .contains("'lease.zookeper.connect-string'", "misspelt-lease-key.yml",
                                    "'lease.zookeeper.connect-string'")
                            .doesNotContain("lease.version").doesNotContain("lease.port"));
        });
        assertThat(output).contains("APPLICATION FAILED TO START").contains("'lease.zookeper.connect-string'");
        assertThat(warning(output)).contains("'lease.version'").contains("'lease.port'")
                .doesNotContain("lease.zookeper");
    }

    /** The warning about keys set outside the application: from its first line to "Only logged". */
    private static String warning(CapturedOutput output) {
        String out = output.getOut();
        int end = out.indexOf("Only logged");
        assertThat(end).as("a warning about keys set outside the application").isNotNegative();
        int start = out.lastIndexOf("Unknown propert", end);
        return out.substring(out.lastIndexOf('\n', start) + 1, out.indexOf('\n', end));
    }

    @Test
    void theEscapeHatchOnlyLogsUnknownKeys(CapturedOutput output) {
        runner.withPropertyValues("lease.backend=in-memory", "lease.default-tll=10s",
                "lease.ignore-unknown-properties=true").run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("'lease.default-tll'").contains("'lease.default-ttl'");
    }

    @Test
    void aRealApplicationPrintsTheKeyAndTheFixInItsFailureReport(CapturedOutput output) {
        SpringApplication application = new SpringApplication(LeaseApplication.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        try {
            application.run("--lease.backend=in-memory", "--lease.zookeper.connect-string=127.0.0.1:2181").close();
        }
        catch (RuntimeException expected) {
            // The failure report below is what the user sees.
        }
        assertThat(output).contains("APPLICATION FAILED TO START")
                .contains("'lease.zookeper.connect-string'").contains("'lease.zookeeper.connect-string'")
                .contains("Fix: ");
    }

    @Configuration(proxyBeanMethods = false)
    @Import({InMemoryLeaseConfiguration.class, LeaseAutoConfiguration.class})
    static class LeaseApplication {
    }

    /** An application whose environment variables include {@code variables}, as a pod's would. */
    private static SpringApplication application(Map<String, String> variables) {
        SpringApplication application = new SpringApplication(LeaseApplication.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        application.addInitializers(context -> environmentVariables(context.getEnvironment(), variables));
        return application;
    }

    private static void withSystemProperty(String name, String value, Runnable run) {
        String before = System.setProperty(name, value);
        try {
            run.run();
        }
        finally {
            if (before == null) {
                System.clearProperty(name);
            }
            else {
                System.setProperty(name, before);
            }
        }
    }

    private static void environmentVariables(org.springframework.core.env.ConfigurableEnvironment environment,
            Map<String, ?> variables) {
        Map<String, Object> all = new HashMap<>(environment.getSystemEnvironment());
        all.putAll(variables);
        environment.getPropertySources().replace(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, all));
    }

    private static LeaseConfigurationException leaseFailure(AssertableApplicationContext context) {
        assertThat(context).hasFailed();
        return leaseFailure(context.getStartupFailure());
    }

    private static LeaseConfigurationException leaseFailure(Throwable startupFailure) {
        Throwable failure = startupFailure;
        while (!(failure instanceof LeaseConfigurationException) && failure.getCause() != null) {
            failure = failure.getCause();
        }
        assertThat(failure).isInstanceOf(LeaseConfigurationException.class);
        return (LeaseConfigurationException) failure;
    }
}
