package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.core.BackendRouter;
import dev.lease.LeaseConfigurationException;
import dev.lease.memory.InMemoryLeaseBackend;

@ExtendWith(OutputCaptureExtension.class)
class LeaseAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(InMemoryLeaseAutoConfiguration.class, LeaseAutoConfiguration.class));

    @Test
    void theInMemoryBackendServesBothKindsWhenNamedAndTheStartupLogSaysSo(CapturedOutput output) {
        runner.withPropertyValues("lease.backend=in-memory").run(context -> {
            assertThat(context).hasSingleBean(LeaseTemplate.class).hasSingleBean(InMemoryLeaseBackend.class);
            long token = context.getBean(LeaseTemplate.class)
                    .execute(LeaseSpec.of("auto", LeaseKind.CORRECTNESS), lease -> lease.token().value());
            assertThat(context.getBean(InMemoryLeaseBackend.class).lastToken("auto")).hasValue(token);
        });
        assertThat(output).contains("Lease backends: CORRECTNESS -> in-memory (fencing tokens), EFFICIENCY -> in-memory");
    }

    @Test
    void theInMemoryBackendIsNeverPickedSilently() {
        runner.run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(LeaseConfigurationException.class)
                    .hasMessageContaining("No lease backend is available");
        });
    }

    @Test
    void anUnknownBackendNameFailsTheStartupWithTheKnownNames() {
        runner.withPropertyValues("lease.backend=etcd").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("lease.backend=etcd names no lease backend")
                    .hasMessageContaining("zookeeper, redis, jdbc, in-memory");
        });
    }

    @Test
    void anUnparseableDurationPropertyFailsTheStartupNamingTheProperty() {
        runner.withPropertyValues("lease.backend=in-memory", "lease.default-ttl=half a minute").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasStackTraceContaining("lease.default-ttl")
                    .hasStackTraceContaining("half a minute");
        });
    }

    @Test
    void aGlobalRenewalIntervalAtHalfTheDefaultTtlFailsTheStartup() {
        runner.withPropertyValues("lease.backend=in-memory", "lease.default-ttl=20s", "lease.renew-every=10s")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .hasMessageContaining("renewEvery 10s is not less than half the ttl 20s");
                });
    }

    @Test
    void kindsCanBeRoutedSeparately() {
        runner.withPropertyValues("lease.correctness-backend=in-memory", "lease.efficiency-backend=in-memory")
                .run(context -> assertThat(context.getBean(BackendRouter.class).backendFor(LeaseKind.EFFICIENCY).id())
                        .isEqualTo("in-memory"));
    }

    @Test
    void everyBeanBacksOffForTheApplicationsOwn() {
        InMemoryLeaseBackend own = new InMemoryLeaseBackend();
        runner.withPropertyValues("lease.backend=in-memory").withBean(InMemoryLeaseBackend.class, () -> own)
                .run(context -> assertThat(context.getBean(InMemoryLeaseBackend.class)).isSameAs(own));
    }

    @Test
    void theFailureReportShowsTheFixAsTheAction() {
        FailureAnalysis analysis = new LeaseConfigurationFailureAnalyzer()
                .analyze(new IllegalStateException(new LeaseConfigurationException("Broken.", "mend it.")));
        assertThat(analysis.getDescription()).isEqualTo("Broken.");
        assertThat(analysis.getAction()).isEqualTo("Fix: mend it.");
    }
}
