package dev.lease.autoconfigure.aop;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;

import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.WhenBusy;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.autoconfigure.UnfencedBackend;
import dev.lease.LeaseConfigurationException;
import dev.lease.fence.JdbcFence;
import dev.lease.spi.LeaseBackend;

/** Every mistake visible before the first call fails the startup, naming the method, the lease and the fix. */
class LeasedStartupValidationTest {

    private ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class))
            .withPropertyValues("lease.backend=in-memory");

    /** @param culprit how the message must name the method and the lease */
    private void assertStartupFails(Class<?> bean, String culprit, String... fragments) {
        runner.withBean(bean).run(context -> {
            assertThat(context).hasFailed();
            Throwable failure = context.getStartupFailure();
            while (!(failure instanceof LeaseConfigurationException) && failure.getCause() != null) {
                failure = failure.getCause();
            }
            assertThat(failure).isInstanceOf(LeaseConfigurationException.class);
            assertThat(failure.getMessage()).startsWith(culprit).contains(fragments).contains("Fix:");
        });
    }

    @Test
    void skipOnAPrimitiveReturnType() {
        assertStartupFails(SkipPrimitive.class, "@Leased on SkipPrimitive.count() (lease 'skip-primitive')",
                "whenBusy = SKIP", "int");
    }

    @Test
    void unparseableDuration() {
        assertStartupFails(BadDuration.class, "@Leased on BadDuration.run() (lease 'bad-duration')",
                "ttl = \"thirty seconds\"", "not a duration");
    }

    @Test
    void aNegativeOrMalformedHoldAtLeastFailsTheStartup() {
        assertStartupFails(NegativeHold.class, "@Leased on NegativeHold.run() (lease 'negative-hold')",
                "holdAtLeast = \"${job.hold:-2s}\" (resolved to \"-2s\") is negative");
        assertStartupFails(BadHold.class, "@Leased on BadHold.run() (lease 'bad-hold')",
                "holdAtLeast = \"4 seconds\"", "not a duration");
    }

    @Test
    void unresolvablePlaceholder() {
        assertStartupFails(MissingPlaceholder.class, "@Leased on MissingPlaceholder.run() (lease 'missing-placeholder')",
                "${nowhere.ttl}");
    }

    @Test
    void renewingAtHalfTheTtlOrSlower() {
        assertStartupFails(SlowRenewal.class, "@Leased on SlowRenewal.run() (lease 'slow-renewal')",
                "renewEvery 5s is not less than half the ttl 10s", "ttl/3 = 3333ms");
    }

    @Test
    void blankName() {
        assertStartupFails(BlankName.class, "@Leased on BlankName.run() (lease ' ')", "blank");
    }

    @Test
    void nameThatEscapesItsNamespace() {
        assertStartupFails(SlashName.class, "@Leased on SlashName.run() (lease '../../zookeeper')", "'/'");
    }

    @Test
    void unparseableNameTemplate() {
        assertStartupFails(BrokenTemplate.class, "@Leased on BrokenTemplate.run(long) (lease 'invoice-#{#id')",
                "not a valid SpEL template");
    }

    @Test
    void asynchronousReturnType() {
        assertStartupFails(AsyncWork.class, "@Leased on AsyncWork.run() (lease 'async-work')", "CompletableFuture");
    }

    @Test
    void correctnessOnABackendWithoutFencingTokens() {
        runner = runner.withPropertyValues("lease.backend=unfenced").withUserConfiguration(UnfencedBackendConfig.class);
        assertStartupFails(CorrectnessJob.class, "@Leased on CorrectnessJob.bill(long) (lease 'invoice-#{#id}')",
                "issues no fencing tokens", "lease.correctness-backend: zookeeper");
    }

    @Test
    void aMethodTheProxyCannotIntercept() {
        assertStartupFails(FinalMethod.class, "@Leased on FinalMethod.run() (lease 'final-method')", "final",
                "without any lease");
    }

    @Test
    void aNameTemplateReferringToAParameterTheMethodDoesNotHave() {
        assertStartupFails(UnknownParameter.class, "@Leased on UnknownParameter.bill(long) (lease 'invoice-#{#id}')",
                "#id", "its parameters are invoiceId (#p0)", "#invoiceId", "#p0");
    }

    @Test
    void aFenceTemplateReferringToAParameterTheMethodDoesNotHave() {
        assertStartupFails(UnknownFenceParameter.class,
                "@Leased on UnknownFenceParameter.bill(long, String) (lease 'invoice-#{#invoiceId}')",
                "fence \"account-#{#account}\"", "#account", "invoiceId (#p0), accountId (#p1)");
    }

    @Test
    void aParameterReferenceBeyondTheLastParameter() {
        assertStartupFails(IndexOutOfRange.class, "@Leased on IndexOutOfRange.run(String) (lease 'region-#{#p1}')",
                "#p1", "region (#p0)");
    }

    @Test
    void fenceAtGrantOnAnEfficiencyLease() {
        assertStartupFails(FencedReport.class, "@Leased on FencedReport.run() (lease 'nightly-report')",
                "fence at grant needs a fencing token", "remove fence");
    }

    @Test
    void fenceAtGrantWithoutAFence() {
        assertStartupFails(FencedBilling.class, "@Leased on FencedBilling.bill(long) (lease 'invoice-#{#id}')",
                "no JdbcFence bean", "declare a JdbcFence bean");
    }

    @Test
    void fenceAtGrantWithAFenceStartsFine() {
        runner.withBean(JdbcFence.class, () -> new JdbcFence(new JdbcTemplate(new JdbcDataSource())))
                .withBean(FencedBilling.class).run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void correctMethodsStartFine() {
        runner.withBean(CorrectnessJob.class).run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void everyVariableTheCallDefinesIsAccepted() {
        runner.withBean(AllVariables.class).run(context -> assertThat(context).hasNotFailed());
    }

    static class SkipPrimitive {
        @Leased(name = "skip-primitive", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP)
        public int count() {
            return 1;
        }
    }

    static class BadDuration {
        @Leased(name = "bad-duration", kind = LeaseKind.EFFICIENCY, ttl = "thirty seconds")
        public void run() {
        }
    }

    static class NegativeHold {
        @Leased(name = "negative-hold", kind = LeaseKind.EFFICIENCY, holdAtLeast = "${job.hold:-2s}")
        public void run() {
        }
    }

    static class BadHold {
        @Leased(name = "bad-hold", kind = LeaseKind.EFFICIENCY, holdAtLeast = "4 seconds")
        public void run() {
        }
    }

    static class MissingPlaceholder {
        @Leased(name = "missing-placeholder", kind = LeaseKind.EFFICIENCY, ttl = "${nowhere.ttl}")
        public void run() {
        }
    }

    static class SlowRenewal {
        @Leased(name = "slow-renewal", kind = LeaseKind.EFFICIENCY, ttl = "10s", renewEvery = "5s")
        public void run() {
        }
    }

    static class BlankName {
        @Leased(name = " ", kind = LeaseKind.EFFICIENCY)
        public void run() {
        }
    }

    static class SlashName {
        @Leased(name = "../../zookeeper", kind = LeaseKind.EFFICIENCY)
        public void run() {
        }
    }

    static class AsyncWork {
        @Leased(name = "async-work", kind = LeaseKind.EFFICIENCY)
        public CompletableFuture<String> run() {
            return CompletableFuture.completedFuture("x");
        }
    }

    static class FinalMethod {
        @Leased(name = "final-method", kind = LeaseKind.EFFICIENCY)
        public final void run() {
        }
    }

    static class CorrectnessJob {
        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS)
        public void bill(long id) {
        }
    }

    static class BrokenTemplate {
        @Leased(name = "invoice-#{#id", kind = LeaseKind.CORRECTNESS)
        public void run(long id) {
        }
    }

    static class FencedReport {
        @Leased(name = "nightly-report", kind = LeaseKind.EFFICIENCY, fence = "nightly-report")
        public void run() {
        }
    }

    static class UnknownParameter {
        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS)
        public void bill(long invoiceId) {
        }
    }

    static class UnknownFenceParameter {
        @Leased(name = "invoice-#{#invoiceId}", kind = LeaseKind.CORRECTNESS, fence = "account-#{#account}")
        public void bill(long invoiceId, String accountId) {
        }
    }

    static class IndexOutOfRange {
        @Leased(name = "region-#{#p1}", kind = LeaseKind.EFFICIENCY)
        public void run(String region) {
        }
    }

    static class AllVariables {
        @Leased(name = "all-#{#region}-#{#p0}-#{#a1}-#{#root.methodName}-#{#root.args.?[#this != null].size()}",
                kind = LeaseKind.EFFICIENCY)
        public void run(String region, int shard) {
        }
    }

    static class FencedBilling {
        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS, fence = "invoice-#{#id}")
        public void bill(long id) {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class UnfencedBackendConfig {
        @Bean
        LeaseBackend<?> unfenced() {
            return new UnfencedBackend();
        }
    }
}
