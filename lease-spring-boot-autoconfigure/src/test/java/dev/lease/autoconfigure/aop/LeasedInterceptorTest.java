package dev.lease.autoconfigure.aop;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.lease.Lease;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.LeaseUnavailableException;
import dev.lease.Leased;
import dev.lease.WhenBusy;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.memory.InMemoryLeaseBackend;

class LeasedInterceptorTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(LeaseAutoConfiguration.class))
            .withPropertyValues("lease.backend=in-memory", "jobs.ttl=2s")
            .withUserConfiguration(Jobs.Config.class);

    @Test
    void namesAreSpelTemplatesOverTheArguments() {
        runner.run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            assertThat(jobs.byName(42)).isEqualTo("invoice-42#"
                    + context.getBean(InMemoryLeaseBackend.class).lastToken("invoice-42").orElseThrow());
            assertThat(jobs.byIndex("eu")).isEqualTo("region-eu");
            assertThat(jobs.byRoot("x", 7)).isEqualTo("bill-x-7");
        });
    }

    @Test
    void durationsAcceptShortFormIsoAndPlaceholders() {
        runner.run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            assertThat(jobs.placeholderTtl().toMillis()).isBetween(1L, 2000L);
            assertThat(jobs.isoTtl().toMillis()).isBetween(1L, 3000L);
        });
    }

    @Test
    void busyLeasesThrowOrSkipAsAsked() {
        runner.run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            LeaseTemplate leases = context.getBean(LeaseTemplate.class);
            try (Lease held = leases.acquire(LeaseSpec.of("busy", LeaseKind.EFFICIENCY))) {
                assertThat(held.isValid()).isTrue();
                assertThatThrownBy(jobs::throwWhenBusy).isInstanceOf(LeaseUnavailableException.class)
                        .hasMessageContaining("'busy'");
                assertThat(jobs.skipObject()).isNull();
                assertThat(jobs.skipOptional()).isEmpty();
                jobs.skipVoid();
                assertThat(jobs.runs()).as("skipped bodies that ran").isZero();
            }
            assertThat(jobs.skipOptional()).contains("ran");
        });
    }

    @Test
    void checkedExceptionsOfTheMethodPassThroughUnchanged() {
        runner.run(context -> assertThatThrownBy(() -> context.getBean(Jobs.class).failsWithIo())
                .isInstanceOf(IOException.class).hasMessage("io"));
    }

    @Test
    void aLostLeaseInterruptsTheMethodAndTheCallerGetsLeaseLostException() {
        runner.run(context -> {
            Jobs jobs = context.getBean(Jobs.class);
            InMemoryLeaseBackend backend = context.getBean(InMemoryLeaseBackend.class);
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try {
                Future<String> call = pool.submit(jobs::longRunning);
                assertThat(jobs.awaitStarted()).isTrue();
                backend.revoke("long");
                assertThatThrownBy(() -> call.get(seconds(15).toMillis(), TimeUnit.MILLISECONDS))
                        .isInstanceOf(ExecutionException.class).cause().isInstanceOf(LeaseLostException.class)
                        .hasMessageContaining("'long'")
                        .hasMessageContaining("token " + backend.lastToken("long").orElseThrow())
                        .hasCauseInstanceOf(InterruptedException.class);
            }
            finally {
                pool.shutdownNow();
            }
        });
    }

    @Test
    void aNamePartThatEvaluatesToNothingIsRefusedInsteadOfSharingOneLease() {
        runner.run(context -> assertThatThrownBy(() -> context.getBean(Jobs.class).byNullable(null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("#{#invoiceId}")
                .hasMessageContaining("evaluated to null").hasMessageContaining("Jobs.byNullable(Long)"));
    }

    @Test
    void invalidNamesComputedAtCallTimeAreRefused() {
        runner.run(context -> assertThatThrownBy(() -> context.getBean(Jobs.class).byIndex("../etc"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("region-../etc"));
    }

    static class Jobs {

        // Read through methods: the bean is a CGLIB proxy whose own fields are never set.
        private int runs;
        private final CountDownLatch started = new CountDownLatch(1);

        public int runs() {
            return runs;
        }

        public boolean awaitStarted() throws InterruptedException {
            return started.await(seconds(10).toMillis(), TimeUnit.MILLISECONDS);
        }

        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS)
        public String byName(long id) {
            return LeaseContext.current().name() + "#" + LeaseContext.token().value();
        }

        @Leased(name = "invoice-#{#invoiceId}", kind = LeaseKind.CORRECTNESS)
        public String byNullable(Long invoiceId) {
            return LeaseContext.current().name();
        }

        @Leased(name = "region-#{#p0}", kind = LeaseKind.EFFICIENCY)
        public String byIndex(String region) {
            return LeaseContext.current().name();
        }

        @Leased(name = "bill-#{#root.args[0]}-#{#root.args[1]}", kind = LeaseKind.CORRECTNESS)
        public String byRoot(String a, int b) {
            return LeaseContext.current().name();
        }

        @Leased(name = "ttl-placeholder", kind = LeaseKind.EFFICIENCY, ttl = "${jobs.ttl}")
        public java.time.Duration placeholderTtl() {
            return LeaseContext.current().remaining();
        }

        @Leased(name = "ttl-iso", kind = LeaseKind.EFFICIENCY, ttl = "PT3S", renewEvery = "1s")
        public java.time.Duration isoTtl() {
            return LeaseContext.current().remaining();
        }

        @Leased(name = "busy", kind = LeaseKind.EFFICIENCY)
        public String throwWhenBusy() {
            runs++;
            return "ran";
        }

        @Leased(name = "busy", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP)
        public String skipObject() {
            runs++;
            return "ran";
        }

        @Leased(name = "busy", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP, waitFor = "50ms")
        public Optional<String> skipOptional() {
            return Optional.of("ran");
        }

        @Leased(name = "busy", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP)
        public void skipVoid() {
            runs++;
        }

        @Leased(name = "io", kind = LeaseKind.EFFICIENCY)
        public void failsWithIo() throws IOException {
            throw new IOException("io");
        }

        @Leased(name = "long", kind = LeaseKind.CORRECTNESS, ttl = "1500ms")
        public String longRunning() throws InterruptedException {
            started.countDown();
            Thread.sleep(seconds(120).toMillis());
            return "finished without the lease";
        }

        @Configuration(proxyBeanMethods = false)
        static class Config {
            @Bean
            Jobs jobs() {
                return new Jobs();
            }
        }
    }
}
