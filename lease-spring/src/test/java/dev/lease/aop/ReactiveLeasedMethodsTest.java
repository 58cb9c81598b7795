package dev.lease.aop;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import dev.lease.FencingToken;
import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseTemplate;
import dev.lease.Leased;
import dev.lease.WhenBusy;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.HeldLeaseSnapshot;
import dev.lease.core.LeaseEngine;
import dev.lease.leader.LeaderOnly;
import dev.lease.leader.Leadership;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.reactive.ReactiveLeaseContext;

/** {@code @Leased} and {@code @LeaderOnly} on Mono/Flux methods, through the advisors of a plain Spring context. */
class ReactiveLeasedMethodsTest {

    @Test
    void leasedMonoRunsOnSubscriptionWithTheTokenInTheContextAndSkipsWhenBusy() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(LeaseConfig.class,
                Invoices.class)) {
            Invoices invoices = context.getBean(Invoices.class);
            InMemoryLeaseBackend backend = context.getBean(InMemoryLeaseBackend.class);
            Mono<FencingToken> bill = invoices.bill(42);
            assertThat(backend.lastToken("invoice-42")).as("nothing granted on assembly").isEmpty();

            StepVerifier.create(bill)
                    .assertNext(token -> assertThat(token.value()).isEqualTo(backend.lastToken("invoice-42").getAsLong()))
                    .verifyComplete();

            LeaseEngine engine = context.getBean(LeaseEngine.class);
            try (var holder = engine.acquire(dev.lease.LeaseSpec.of("nightly", LeaseKind.EFFICIENCY))) {
                StepVerifier.create(invoices.nightly()).verifyComplete();
                assertThat(invoices.nightlyRan()).as("skipped while busy").isFalse();
            }
            StepVerifier.create(invoices.nightly()).expectNext("a", "b").verifyComplete();
            assertThat(invoices.nightlyRan()).isTrue();
        }
    }

    /** holdAtLeast on a Mono: the lease outlives the publisher, so the next subscription finds it busy and skips. */
    @Test
    void aLeasedMonoHoldsItsLeaseAfterItCompletesForHoldAtLeast() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(LeaseConfig.class,
                Invoices.class)) {
            Invoices invoices = context.getBean(Invoices.class);
            LeaseEngine engine = context.getBean(LeaseEngine.class);
            StepVerifier.create(invoices.hourly()).expectNext("ran").verifyComplete();
            assertThat(engine.held()).extracting(HeldLeaseSnapshot::name).containsExactly("hourly");
            StepVerifier.create(invoices.hourly()).as("the next run, within the hold").verifyComplete();
        }
    }

    @Test
    void lossCancelsALeasedFlux() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(LeaseConfig.class,
                Invoices.class)) {
            Invoices invoices = context.getBean(Invoices.class);
            StepVerifier.create(invoices.importing())
                    .expectNextCount(2)
                    .then(() -> context.getBean(InMemoryLeaseBackend.class).revoke("import"))
                    .thenConsumeWhile(tick -> true)
                    .expectError(LeaseLostException.class)
                    .verify(seconds(30));
            await().atMost(seconds(30)).until(invoices::importCancelled);
        }
    }

    @Test
    void leaderOnlyFluxRunsInTheTermAndIsCancelledWhenItEnds() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(LeaseConfig.class,
                LeaderConfig.class, Reports.class)) {
            Reports reports = context.getBean(Reports.class);
            Leadership leadership = context.getBean(SpringLeaderElections.class).get("reports");
            await().atMost(seconds(30)).until(leadership::isLeader);
            StepVerifier.create(reports.term())
                    .assertNext(token -> assertThat(token).isEqualTo(leadership.token().orElseThrow()))
                    .verifyComplete();
            StepVerifier.create(reports.ticks())
                    .expectNextCount(2)
                    .then(leadership::yieldLeadership)
                    .thenConsumeWhile(tick -> true)
                    .expectError(LeaseLostException.class)
                    .verify(seconds(30));
        }
    }

    @Test
    void leaderOnlyMonoCompletesEmptyWhenNotLeader() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(LeaseConfig.class,
                LeaderConfig.class, Reports.class)) {
            Leadership leadership = context.getBean(SpringLeaderElections.class).get("reports");
            await().atMost(seconds(30)).until(leadership::isLeader);
            context.stop(); // ends the campaign: no longer leader
            StepVerifier.create(context.getBean(Reports.class).term()).verifyComplete();
        }
    }

    @Test
    void otherPublishersAreRefusedAtStartup() {
        assertThatThrownBy(() -> new AnnotationConfigApplicationContext(LeaseConfig.class, OtherPublisher.class).close())
                .isInstanceOf(BeanCreationException.class).rootCause()
                .isInstanceOf(LeaseConfigurationException.class)
                .hasMessageContaining("OtherPublisher.stream()").hasMessageContaining("return Mono or Flux");
    }

    @Configuration(proxyBeanMethods = false)
    static class LeaseConfig {

        @Bean
        InMemoryLeaseBackend leaseBackend() {
            return new InMemoryLeaseBackend();
        }

        @Bean(destroyMethod = "close")
        LeaseEngine leaseEngine(InMemoryLeaseBackend backend) {
            return new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, backend, LeaseKind.EFFICIENCY,
                    backend)), LeaseDefaults.standard());
        }

        @Bean
        static LeasedAnnotationBeanPostProcessor leasedAnnotationBeanPostProcessor(ObjectProvider<LeaseTemplate> leases) {
            return new LeasedAnnotationBeanPostProcessor(leases);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class LeaderConfig {

        @Bean
        SpringLeaderElections leaderElections(ObjectProvider<LeaseEngine> engine) {
            return new SpringLeaderElections(engine, List.of());
        }

        @Bean
        static LeaderOnlyAnnotationBeanPostProcessor leaderOnlyAnnotationBeanPostProcessor(
                ObjectProvider<SpringLeaderElections> elections) {
            return new LeaderOnlyAnnotationBeanPostProcessor(elections);
        }
    }

    static class Invoices {

        volatile boolean nightlyRan;
        final AtomicBoolean importCancelled = new AtomicBoolean();

        // Read through methods: the fields of a class proxy are not the target's.
        public boolean nightlyRan() {
            return nightlyRan;
        }

        public boolean importCancelled() {
            return importCancelled.get();
        }

        @Leased(name = "invoice-#{#id}", kind = LeaseKind.CORRECTNESS)
        public Mono<FencingToken> bill(long id) {
            return ReactiveLeaseContext.token();
        }

        @Leased(name = "nightly", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP)
        public Flux<String> nightly() {
            return Flux.just("a", "b").doOnSubscribe(s -> nightlyRan = true);
        }

        @Leased(name = "hourly", kind = LeaseKind.EFFICIENCY, whenBusy = WhenBusy.SKIP, holdAtLeast = "10m")
        public Mono<String> hourly() {
            return Mono.just("ran");
        }

        @Leased(name = "import", kind = LeaseKind.CORRECTNESS, ttl = "2s")
        public Flux<Long> importing() {
            return Flux.interval(Duration.ofMillis(20)).doOnCancel(() -> importCancelled.set(true));
        }
    }

    static class Reports {

        @LeaderOnly(election = "reports", kind = LeaseKind.CORRECTNESS)
        public Mono<FencingToken> term() {
            return ReactiveLeaseContext.token();
        }

        @LeaderOnly(election = "reports", kind = LeaseKind.CORRECTNESS)
        public Flux<Long> ticks() {
            return Flux.interval(Duration.ofMillis(20));
        }
    }

    static class OtherPublisher {

        @Leased(name = "stream", kind = LeaseKind.EFFICIENCY)
        public org.reactivestreams.Publisher<String> stream() {
            return Flux.just("x");
        }
    }
}
