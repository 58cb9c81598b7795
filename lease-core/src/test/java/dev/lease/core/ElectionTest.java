package dev.lease.core;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.lease.LeaseContext;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.leader.LeadershipGrantedEvent;
import dev.lease.leader.LeadershipRevokedEvent;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.LeaseBackend;

/** Three instances (engines) campaigning for one election on a shared in-memory store. */
class ElectionTest {

    private final InMemoryLeaseBackend store = new InMemoryLeaseBackend();
    private final List<LeaseEngine> engines = new ArrayList<>();
    private final List<Election> elections = new ArrayList<>();
    private final List<String> events = new CopyOnWriteArrayList<>();

    @AfterEach
    void closeAll() {
        elections.forEach(Election::close);
        engines.forEach(LeaseEngine::close);
    }

    @Test
    void exactlyOneLeadsAndOnlyItRunsLeaderWork() throws Throwable {
        List<Election> three = List.of(instance("A"), instance("B"), instance("C"));
        Election leader = awaitOneLeader(three);
        assertThat(leader.token()).isPresent();
        for (Election election : three) {
            String ran = election.runAsLeader(term -> {
                assertThat(LeaseContext.token()).isEqualTo(election.token().orElseThrow());
                return "ran";
            }, () -> "skipped");
            assertThat(ran).isEqualTo(election == leader ? "ran" : "skipped");
        }
        assertThat(events).hasSize(1).first().asString().startsWith("granted " + leader.election());
    }

    @Test
    void closingTheLeaderHandsOverAtOnceWithAHigherToken() {
        List<Election> three = List.of(instance("A"), instance("B"), instance("C"));
        Election leader = awaitOneLeader(three);
        long first = leader.token().orElseThrow().value();
        leader.close();
        assertThat(leader.isLeader()).isFalse();
        assertThat(events).anyMatch(event -> event.startsWith("revoked") && event.contains("shutting down"));
        List<Election> rest = three.stream().filter(e -> e != leader).toList();
        // Well within the ttl (30s by default): the release woke a waiting campaign.
        Election next = await().atMost(seconds(5)).until(() -> leaderOf(rest), e -> e != null);
        assertThat(next.token().orElseThrow().value()).isGreaterThan(first);
    }

    /**
     * A closed election never campaigns again, so starting it again is refused out loud: ignored, it would let its
     * owner (a context stopped and started) believe it campaigns while the instance stays leaderless.
     */
    @Test
    void aClosedElectionRefusesToStartAgain() {
        Election only = instance("A");
        await().atMost(seconds(5)).until(only::isLeader);
        only.start();
        assertThat(only.isLeader()).as("a second start changes nothing").isTrue();
        only.close();
        assertThatThrownBy(only::start).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Election 'reports' was closed and cannot campaign again");
        assertThat(only.isLeader()).isFalse();
    }

    @Test
    void aLostTermInterruptsTheLeaderWorkAndAnotherTermFollows() throws Exception {
        List<Election> three = List.of(instance("A"), instance("B"), instance("C"));
        Election leader = awaitOneLeader(three);
        long first = leader.token().orElseThrow().value();
        CountDownLatch inside = new CountDownLatch(1);
        CompletableFuture<Object> work = CompletableFuture.supplyAsync(() -> {
            try {
                return leader.runAsLeader(term -> {
                    inside.countDown();
                    Thread.sleep(seconds(60).toMillis());
                    return "finished";
                }, () -> "skipped");
            }
            catch (Throwable ex) {
                throw new RuntimeException(ex);
            }
        });
        assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
        store.revoke(leader.election());
        assertThatThrownBy(() -> work.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().cause().isInstanceOf(LeaseLostException.class);
        Election next = await().atMost(seconds(10)).until(() -> leaderOf(three), e -> e != null);
        assertThat(next.token().orElseThrow().value()).isGreaterThan(first);
        assertThat(events).anyMatch(event -> event.startsWith("revoked") && event.contains("revoked"));
    }

    @Test
    void aYieldedTermGoesToAnotherInstance() {
        List<Election> two = List.of(instance("A", Duration.ofSeconds(2)), instance("B", Duration.ofSeconds(2)));
        Election leader = awaitOneLeader(two);
        long first = leader.token().orElseThrow().value();
        leader.yieldLeadership();
        Election other = two.get(0) == leader ? two.get(1) : two.get(0);
        await().atMost(seconds(5)).until(other::isLeader);
        assertThat(other.token().orElseThrow().value()).isGreaterThan(first);
        assertThat(leader.isLeader()).isFalse();
        assertThat(events).anyMatch(event -> event.startsWith("revoked") && event.contains("yielded"));
    }

    @Test
    void aLoneInstanceThatYieldsLeadsAgainAfterAPause() {
        Election alone = instance("A", Duration.ofSeconds(1));
        await().atMost(seconds(5)).until(alone::isLeader);
        long first = alone.token().orElseThrow().value();
        alone.yieldLeadership();
        await().atMost(seconds(10)).until(() -> alone.isLeader() && alone.token().orElseThrow().value() > first);
    }

    /** A listener failing with an Error (a failed assertion) did kill the campaign thread, its term held for good. */
    @Test
    void aListenerThatFailsEvenWithAnErrorNeitherStopsTheCampaignNorKeepsTheTerm() {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, store);
        LeaseEngine engine = new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
        engines.add(engine);
        Election broken = engine.election(LeaseSpec.of("reports", LeaseKind.CORRECTNESS), new Election.Listener() {
            @Override
            public void granted(LeadershipGrantedEvent event) {
                throw new AssertionError("a listener's bug");
            }

            @Override
            public void revoked(LeadershipRevokedEvent event) {
                throw new AssertionError("a listener's bug");
            }
        });
        elections.add(broken);
        broken.start();
        await().atMost(seconds(10)).until(broken::isLeader);
        Election other = instance("B");
        broken.close();
        await().atMost(seconds(5)).until(other::isLeader);
    }

    @Test
    void workInATermCannotCloseTheTermsLease() throws Throwable {
        Election alone = instance("A");
        await().atMost(seconds(10)).until(alone::isLeader);
        assertThatThrownBy(() -> alone.runAsLeader(term -> {
            LeaseContext.current().close();
            return null;
        }, () -> null)).isInstanceOf(IllegalStateException.class).hasMessageContaining("yieldLeadership");
        assertThat(alone.isLeader()).isTrue();
    }

    /** A close that interrupted the campaign thread while it released the term left the lease in the store. */
    @Test
    void closingLetsTheTermsReleaseFinishEvenWhenTheStoreIsSlowToAnswer() throws Exception {
        ScriptedBackend slow = new ScriptedBackend();
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, slow);
        LeaseEngine engine = new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
        engines.add(engine);
        Election election = engine.election(LeaseSpec.of("reports", LeaseKind.CORRECTNESS), new Election.Listener() {
            @Override
            public void granted(LeadershipGrantedEvent event) {
            }

            @Override
            public void revoked(LeadershipRevokedEvent event) {
            }
        });
        election.start();
        await().atMost(seconds(10)).until(election::isLeader);
        slow.releaseBlocks = true;
        CompletableFuture.runAsync(() -> {
            await().atMost(seconds(10)).until(() -> slow.releases.get() == 1);
            slow.hang.countDown();
        });
        election.close();
        assertThat(slow.releasesDone).as("the release ran to its end").hasValue(1);
    }

    private Election instance(String name) {
        return instance(name, null);
    }

    private Election instance(String name, Duration ttl) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, store);
        LeaseEngine engine = new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
        engines.add(engine);
        LeaseSpec spec = LeaseSpec.of("reports", LeaseKind.CORRECTNESS);
        Election election = engine.election(ttl == null ? spec : spec.withTtl(ttl), new Election.Listener() {
            @Override
            public void granted(LeadershipGrantedEvent event) {
                events.add("granted " + event.election() + " to " + name + " token " + event.token().orElseThrow());
            }

            @Override
            public void revoked(LeadershipRevokedEvent event) {
                events.add("revoked " + event.election() + " from " + name + ": " + event.reason());
            }
        });
        elections.add(election);
        election.start();
        return election;
    }

    private static Election awaitOneLeader(List<Election> elections) {
        Election leader = await().atMost(seconds(10)).until(() -> leaderOf(elections), e -> e != null);
        assertThat(elections.stream().filter(Election::isLeader)).containsExactly(leader);
        return leader;
    }

    private static Election leaderOf(List<Election> elections) {
        List<Election> leaders = elections.stream().filter(Election::isLeader).toList();
        assertThat(leaders).as("leaders at once").hasSizeLessThanOrEqualTo(1);
        return leaders.isEmpty() ? null : leaders.get(0);
    }
}
