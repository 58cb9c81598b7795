package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import java.util.Queue;

import javax.sql.DataSource;

import org.apache.curator.test.TestingServer;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ContextConsumer;
import org.springframework.jdbc.core.JdbcTemplate;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.VersionInfo;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.Leased;
import dev.lease.leader.LeaderOnly;

/**
 * A name the backend its kind is routed to refuses fails the startup, not the first call: a literal {@code @Leased}
 * name or {@code @LeaderOnly} election, and a template whose literal parts alone break the backend's rules, with the
 * lease, the backend's rule and the fix in the message. Templates whose literal parts are fine start, and the same
 * names start on a backend whose rules they follow.
 */
class BackendNameRulesAtStartupTest {

    private static ContextConsumer<AssertableApplicationContext> failsNaming(String culprit, String... fragments) {
        return context -> {
            assertThat(context).hasFailed();
            Throwable failure = context.getStartupFailure();
            while (!(failure instanceof LeaseConfigurationException) && failure.getCause() != null) {
                failure = failure.getCause();
            }
            assertThat(failure).isInstanceOf(LeaseConfigurationException.class);
            assertThat(failure.getMessage()).startsWith(culprit).contains(fragments).contains("Fix: ");
        };
    }

    private static ContextConsumer<AssertableApplicationContext> starts() {
        return context -> assertThat(context).hasNotFailed();
    }

    private static final String NARROW = "narrow_lease";

    private static KubernetesMockServer kubernetes;
    private static TestingServer zookeeper;

    private final ApplicationContextRunner onKubernetes = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(KubernetesLeaseConfiguration.class,
                    InMemoryLeaseConfiguration.class, LeaseAutoConfiguration.class))
            .withBean(KubernetesClientBuilderCustomizer.class, () -> builder -> builder.withConfig(kubernetesConfig()))
            .withPropertyValues("lease.backend=kubernetes");

    private final ApplicationContextRunner onJdbc = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(JdbcLeaseConfiguration.class, InMemoryLeaseConfiguration.class,
                    LeaseAutoConfiguration.class))
            .withBean(DataSource.class, BackendNameRulesAtStartupTest::narrowTable)
            .withPropertyValues("lease.backend=jdbc", "lease.jdbc.table=" + NARROW, "lease.jdbc.initialize-schema=never");

    @BeforeAll
    static void startServers() throws Exception {
        Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
        kubernetes = new KubernetesMockServer(new Context(Serialization.jsonMapper()), new MockWebServer(), responses,
                new KubernetesMixedDispatcher(responses), false);
        kubernetes.init();
        kubernetes.setVersionInfo(new VersionInfo.Builder().withMajor("1").withMinor("35").withGitVersion("v1.35.0")
                .build());
        zookeeper = new TestingServer(true);
    }

    @AfterAll
    static void stopServers() throws Exception {
        kubernetes.destroy();
        zookeeper.close();
    }

    // Kubernetes: Lease objects are named lease-<name> and must be DNS subdomains (lower-case, digits, '-' and '.').

    @Test
    void kubernetesALiteralNameWithUpperCaseAndUnderscoreFailsTheStartup() {
        onKubernetes.withUserConfiguration(NightlyReport.class).run(failsNaming(
                "@Leased on NightlyReport.run() (lease 'Nightly_Report')", "kubernetes backend",
                "'lease-Nightly_Report' is not a valid Kubernetes object name", "upper-case", "rename it"));
    }

    @Test
    void kubernetesATemplateWhoseLiteralPartsBreakTheRulesFailsTheStartup() {
        onKubernetes.withUserConfiguration(UpperCaseTemplate.class).run(failsNaming(
                "@Leased on UpperCaseTemplate.bill(String) (lease 'Invoice_#{#id}')", "literal parts",
                "whatever its #{...} parts evaluate to", "kubernetes backend", "'lease-Invoice_0'",
                "change the literal text"));
        onKubernetes.withUserConfiguration(TrailingDot.class).run(failsNaming(
                "@Leased on TrailingDot.bill(String) (lease 'invoice-#{#id}.')", "literal parts",
                "must start and end with a letter or digit"));
    }

    @Test
    void kubernetesTemplatesWhoseLiteralPartsAreFineStart() {
        onKubernetes.withUserConfiguration(FineTemplates.class).run(starts());
    }

    @Test
    void kubernetesAnElectionNameFailsTheStartupNamingTheLeaderOnlyMethod() {
        onKubernetes.withUserConfiguration(NightlyElection.class).run(failsNaming(
                "@LeaderOnly on NightlyElection.run() (election 'Nightly_Report'): the name is refused",
                "kubernetes backend",
                "upper-case", "rename it"));
    }

    @Test
    void theSameNamesStartOnABackendWhoseRulesTheyFollow() {
        onKubernetes.withPropertyValues("lease.backend=in-memory")
                .withUserConfiguration(NightlyReport.class, UpperCaseTemplate.class, NightlyElection.class)
                .run(starts());
    }

    // ZooKeeper refuses, among others, characters outside the Basic Multilingual Plane, such as emoji.

    @Test
    void zooKeeperALiteralNameItRefusesFailsTheStartup() {
        onZooKeeper().withUserConfiguration(Moon.class).run(failsNaming(
                "@Leased on Moon.run() (lease 'moon-\uD83C\uDF19')", "for the zookeeper backend",
                "outside the Basic Multilingual Plane", "rename it"));
    }

    @Test
    void zooKeeperATemplateWhoseLiteralPartsItRefusesFailsTheStartup() {
        onZooKeeper().withUserConfiguration(MoonTemplate.class).run(failsNaming(
                "@Leased on MoonTemplate.bill(String) (lease 'moon-\uD83C\uDF19-#{#id}')", "literal parts",
                "for the zookeeper backend"));
    }

    @Test
    void zooKeeperStartsWithNamesKubernetesWouldRefuse() {
        onZooKeeper().withUserConfiguration(NightlyReport.class, UpperCaseTemplate.class, FineTemplates.class)
                .run(starts());
    }

    // JDBC: the name column of a lease table of the application's own may hold fewer characters than a lease name.

    @Test
    void jdbcALiteralNameLongerThanTheNameColumnFailsTheStartup() {
        onJdbc.withUserConfiguration(LongName.class).run(failsNaming(
                "@Leased on LongName.run() (lease 'nightly-report-for-all-regions')", "for the jdbc backend",
                "30 characters long", "name column of the lease table narrow_lease holds at most 16", "rename it"));
    }

    @Test
    void jdbcATemplateWhoseLiteralPartsAloneAreTooLongFailsTheStartup() {
        onJdbc.withUserConfiguration(LongPrefix.class).run(failsNaming(
                "@Leased on LongPrefix.run(String) (lease 'nightly-report-for-#{#region}')", "literal parts",
                "holds at most 16"));
    }

    @Test
    void jdbcNamesThatFitStartAndALongerEvaluatedNameIsRefusedBeforeTheDatabaseIsAsked() {
        onJdbc.withUserConfiguration(ShortPrefix.class).run(context -> {
            assertThat(context).hasNotFailed();
            ShortPrefix bean = context.getBean(ShortPrefix.class);
            assertThat(bean.run("eu")).isEqualTo("report-eu");
            assertThatThrownBy(() -> bean.run("everywhere-else"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("holds at most 16");
            assertThatThrownBy(() -> context.getBean(LeaseTemplate.class).execute(
                    LeaseSpec.of("a-programmatic-long-name", LeaseKind.CORRECTNESS), lease -> null))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("holds at most 16");
        });
    }

    private ApplicationContextRunner onZooKeeper() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ZooKeeperLeaseConfiguration.class,
                        InMemoryLeaseConfiguration.class, LeaseAutoConfiguration.class))
                .withPropertyValues("lease.backend=zookeeper", "lease.default-ttl=10s",
                        "lease.zookeeper.connect-string=" + zookeeper.getConnectString());
    }

    private static Config kubernetesConfig() {
        return new ConfigBuilder(Config.empty()).withMasterUrl(kubernetes.url("/")).withNamespace("names")
                .withRequestRetryBackoffLimit(0).build();
    }

    private static DataSource narrowTable() {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:narrow-names;DB_CLOSE_DELAY=-1");
        ds.setUser("sa");
        new JdbcTemplate(ds).execute("CREATE TABLE IF NOT EXISTS " + NARROW + " (name VARCHAR(16) NOT NULL PRIMARY KEY, "
                + "owner VARCHAR(64), token BIGINT NOT NULL, expires_at TIMESTAMP WITH TIME ZONE NOT NULL)");
        return ds;
    }

    static class NightlyReport {

        @Leased(name = "Nightly_Report", kind = LeaseKind.EFFICIENCY)
        public void run() {
        }
    }

    static class UpperCaseTemplate {

        @Leased(name = "Invoice_#{#id}", kind = LeaseKind.EFFICIENCY)
        public void bill(String id) {
        }
    }

    static class TrailingDot {

        @Leased(name = "invoice-#{#id}.", kind = LeaseKind.EFFICIENCY)
        public void bill(String id) {
        }
    }

    /** The literal parts are fine whenever the #{...} parts give plain values, whether or not they end in '-'. */
    static class FineTemplates {

        @Leased(name = "invoice-#{#id}", kind = LeaseKind.EFFICIENCY)
        public void bill(String id) {
        }

        @Leased(name = "#{#region}-reports", kind = LeaseKind.EFFICIENCY)
        public void report(String region) {
        }

        @Leased(name = "#{#tenant}.invoice-#{#id}", kind = LeaseKind.EFFICIENCY)
        public void tenantBill(String tenant, String id) {
        }
    }

    static class NightlyElection {

        @LeaderOnly(election = "Nightly_Report", kind = LeaseKind.EFFICIENCY)
        public void run() {
        }
    }

    static class Moon {

        @Leased(name = "moon-\uD83C\uDF19", kind = LeaseKind.CORRECTNESS)
        public void run() {
        }
    }

    static class MoonTemplate {

        @Leased(name = "moon-\uD83C\uDF19-#{#id}", kind = LeaseKind.CORRECTNESS)
        public void bill(String id) {
        }
    }

    static class LongName {

        @Leased(name = "nightly-report-for-all-regions", kind = LeaseKind.CORRECTNESS)
        public void run() {
        }
    }

    static class LongPrefix {

        @Leased(name = "nightly-report-for-#{#region}", kind = LeaseKind.CORRECTNESS)
        public void run(String region) {
        }
    }

    static class ShortPrefix {

        @Leased(name = "report-#{#region}", kind = LeaseKind.CORRECTNESS)
        public String run(String region) {
            return dev.lease.LeaseContext.current().name();
        }
    }
}
