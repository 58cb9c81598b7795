package dev.lease.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;

import dev.lease.Lease;
import dev.lease.LeaseCallback;
import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.Leased;
import dev.lease.LeasedWork;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.GrantFence;

@ExtendWith(OutputCaptureExtension.class)
class LeaseAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(InMemoryLeaseConfiguration.class, LeaseAutoConfiguration.class));

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
        runner.withPropertyValues("lease.backend=consul").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("lease.backend=consul names no lease backend")
                    .hasMessageContaining("zookeeper, redis, redlock, jdbc, kubernetes, etcd, in-memory");
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

    /**
     * An application's own template (here one that counts calls around the engine it builds on the router bean)
     * replaces the engine bean, and every {@code @Leased} call goes through it; the engine it wraps still checks the
     * methods at startup when it is a bean too.
     */
    @Test
    void anApplicationsOwnLeaseTemplateIsTheOneLeasedCallsGoThrough() {
        runner.withPropertyValues("lease.backend=in-memory").withUserConfiguration(CountingTemplateConfig.class)
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean("leaseEngine");
                    assertThat(context.getBean(LeaseTemplate.class)).isInstanceOf(CountingTemplate.class);
                    Billing billing = context.getBean(Billing.class);
                    assertThat(billing.bill()).isPositive();
                    assertThat(billing.bill()).isPositive();
                    assertThat(context.getBean(CountingTemplate.class).runs).hasValue(2);
                });
    }

    @Test
    void aLeasedMethodRoutedWrongIsStillRefusedAtStartupBehindTheApplicationsOwnTemplate() {
        runner.withPropertyValues("lease.backend=in-memory").withUserConfiguration(CountingTemplateConfig.class)
                .withBean(BadTtl.class).run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).isInstanceOf(LeaseConfigurationException.class)
                            .hasMessageContaining("renewEvery 5s is not less than half the ttl 10s");
                });
    }

    @Configuration(proxyBeanMethods = false)
    static class CountingTemplateConfig {

        @Bean(destroyMethod = "close")
        LeaseEngine countedEngine(BackendRouter router, LeaseProperties properties,
                ObjectProvider<GrantFence> grantFence) {
            return LeaseEngine.builder(router)
                    .defaults(new LeaseDefaults(properties.getDefaultTtl(), properties.getRenewEvery()))
                    .grantFence(grantFence.getIfUnique()).build();
        }

        @Bean
        @Primary
        CountingTemplate countingTemplate(LeaseEngine countedEngine) {
            return new CountingTemplate(countedEngine);
        }

        @Bean
        Billing billing() {
            return new Billing();
        }
    }

    /** A template that wraps another one, as an application would to time or trace its leases. */
    static final class CountingTemplate implements LeaseTemplate {

        final AtomicInteger runs = new AtomicInteger();
        private final LeaseTemplate delegate;

        CountingTemplate(LeaseTemplate delegate) {
            this.delegate = delegate;
        }

        @Override
        public Lease acquire(LeaseSpec spec) {
            return delegate.acquire(spec);
        }

        @Override
        public Optional<Lease> tryAcquire(LeaseSpec spec) {
            return delegate.tryAcquire(spec);
        }

        @Override
        public <T> T execute(LeaseSpec spec, LeaseCallback<T> work) {
            return delegate.execute(spec, work);
        }

        @Override
        public <T> T run(LeaseSpec spec, LeasedWork<T> work, Supplier<T> whenBusy) throws Throwable {
            runs.incrementAndGet();
            return delegate.run(spec, work, whenBusy);
        }
    }

    static class Billing {

        @Leased(name = "billing", kind = LeaseKind.CORRECTNESS)
        long bill() {
            return LeaseContext.token().value();
        }
    }

    static class BadTtl {

        @Leased(name = "bad", kind = LeaseKind.CORRECTNESS, ttl = "10s", renewEvery = "5s")
        void work() {
        }
    }

    @Test
    void theFailureReportShowsTheFixAsTheAction() {
        FailureAnalysis analysis = new LeaseConfigurationFailureAnalyzer()
                .analyze(new IllegalStateException(new LeaseConfigurationException("Broken.", "mend it.")));
        assertThat(analysis.getDescription()).isEqualTo("Broken.");
        // Boot heads it "Action:" already: no second "Fix:" under it.
        assertThat(analysis.getAction()).isEqualTo("Mend it.");
    }
}
