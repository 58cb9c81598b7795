package dev.lease.autoconfigure.leader;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;

import dev.lease.FencingToken;
import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.autoconfigure.LeaseAutoConfiguration;
import dev.lease.testing.TcpProxy;
import dev.lease.leader.LeaderElections;
import dev.lease.leader.LeaderOnly;
import dev.lease.leader.Leadership;

/**
 * Three application instances campaigning for one CORRECTNESS election on a real store, each through a link of its
 * own that a test can freeze.
 */
abstract class LeaderElectionEndToEndTest {

    private final List<Instance> instances = new ArrayList<>();
    private final ExecutorService callers = Executors.newCachedThreadPool();

    /** The lease.* and other properties of an instance whose store link is {@code link}. */
    protected abstract List<String> properties(TcpProxy link, Duration ttl);

    /** Registers what else an instance needs (a DataSource), reaching the store through {@code link}. */
    protected abstract void register(AnnotationConfigApplicationContext context, TcpProxy link);

    /** The port of the store server. */
    protected abstract int storePort();

    /** A ttl the backend takes with the tests' timing; the freeze test waits about that long for a successor. */
    protected abstract Duration shortTtl();

    @AfterEach
    void stopInstances() {
        callers.shutdownNow();
        for (Instance instance : instances) {
            instance.context.close();
            instance.link.close();
        }
    }

    @Test
    void exactlyOneInstanceLeadsAndOnlyItRunsLeaderOnlyWork() throws Exception {
        List<Instance> three = List.of(start(seconds(10)), start(seconds(10)), start(seconds(10)));
        Instance leader = awaitOneLeader(three);
        for (Instance instance : three) {
            FencingToken ran = instance.jobs().currentTerm();
            assertThat(ran).isEqualTo(instance == leader ? leader.leadership().token().orElseThrow() : null);
        }
    }

    @Test
    void theLeadersContextClosingHandsOverBeforeTheTtlWithAHigherToken() {
        Duration ttl = seconds(20);
        List<Instance> three = List.of(start(ttl), start(ttl), start(ttl));
        Instance leader = awaitOneLeader(three);
        long first = leader.leadership().token().orElseThrow().value();
        leader.context.close();
        List<Instance> rest = three.stream().filter(instance -> instance != leader).toList();
        Instance next = await().atMost(ttl.dividedBy(2)).until(() -> leaderOf(rest), it -> it != null);
        assertThat(next.leadership().token().orElseThrow().value()).isGreaterThan(first);
    }

    @Test
    void aFrozenLeaderLinkInterruptsTheLeaderOnlyWorkAndANewLeaderGetsAHigherToken() throws Exception {
        Duration ttl = shortTtl();
        List<Instance> three = List.of(start(ttl), start(ttl), start(ttl));
        Instance leader = awaitOneLeader(three);
        long first = leader.leadership().token().orElseThrow().value();
        CompletableFuture<Void> inside = new CompletableFuture<>();
        Future<Long> work = callers.submit(() -> leader.jobs().longReport(inside));
        inside.get(10, TimeUnit.SECONDS);

        leader.link.freeze();
        assertThatThrownBy(() -> work.get(ttl.multipliedBy(3).toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(LeaseLostException.class);
        assertThat(leader.leadership().isLeader()).isFalse();
        List<Instance> rest = three.stream().filter(instance -> instance != leader).toList();
        Instance next = await().atMost(ttl.multipliedBy(4)).until(() -> leaderOf(rest), it -> it != null);
        assertThat(next.leadership().token().orElseThrow().value()).isGreaterThan(first);
        leader.link.unfreeze();
    }

    @Test
    void yieldLeadershipHandsTheElectionToAnotherInstance() {
        Duration ttl = seconds(10);
        List<Instance> three = List.of(start(ttl), start(ttl), start(ttl));
        Instance leader = awaitOneLeader(three);
        long first = leader.leadership().token().orElseThrow().value();
        leader.leadership().yieldLeadership();
        List<Instance> rest = three.stream().filter(instance -> instance != leader).toList();
        Instance next = await().atMost(ttl.dividedBy(2)).until(() -> leaderOf(rest), it -> it != null);
        assertThat(next.leadership().token().orElseThrow().value()).isGreaterThan(first);
        assertThat(leader.leadership().isLeader()).isFalse();
    }

    private Instance start(Duration ttl) {
        try {
            TcpProxy link = new TcpProxy(storePort());
            AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
            TestPropertyValues.of(properties(link, ttl)).applyTo(context);
            register(context, link);
            context.register(Jobs.class, LeaseAutoConfiguration.class);
            context.refresh();
            Instance instance = new Instance(context, link);
            instances.add(instance);
            return instance;
        }
        catch (java.io.IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    private static Instance awaitOneLeader(List<Instance> instances) {
        return await().atMost(seconds(20)).until(() -> leaderOf(instances), it -> it != null);
    }

    /** The one leader, or null; fails if two instances lead at once. */
    private static Instance leaderOf(List<Instance> instances) {
        List<Instance> leaders = instances.stream()
                .filter(instance -> instance.context.isActive() && instance.leadership().isLeader()).toList();
        assertThat(leaders).as("leaders at once").hasSizeLessThanOrEqualTo(1);
        return leaders.isEmpty() ? null : leaders.get(0);
    }

    record Instance(ConfigurableApplicationContext context, TcpProxy link) {

        Leadership leadership() {
            return context.getBean(LeaderElections.class).get("billing-run");
        }

        Jobs jobs() {
            return context.getBean(Jobs.class);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Jobs {

        @LeaderOnly(election = "billing-run", kind = LeaseKind.CORRECTNESS)
        public FencingToken currentTerm() {
            return LeaseContext.token();
        }

        @LeaderOnly(election = "billing-run", kind = LeaseKind.CORRECTNESS)
        public Long longReport(CompletableFuture<Void> inside) throws InterruptedException {
            inside.complete(null);
            Thread.sleep(Duration.ofMinutes(5).toMillis());
            return LeaseContext.token().value();
        }
    }
}
