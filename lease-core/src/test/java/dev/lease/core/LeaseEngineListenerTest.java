package dev.lease.core;

import static dev.lease.testing.TestTiming.millis;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.LeaseUnavailableException;
import dev.lease.leader.LeadershipGrantedEvent;
import dev.lease.leader.LeadershipRevokedEvent;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.LeaseBackend;

/** What the engine tells its listeners: the contract the Micrometer binding of the auto-configuration counts on. */
class LeaseEngineListenerTest {

    private final Recorder events = new Recorder();
    private LeaseEngine engine;

    @AfterEach
    void close() {
        if (engine != null) {
            engine.close();
        }
    }

    @Test
    void anAcquireIsToldOnceHowItEndedAndTheHoldEndsWithTheRelease() throws Throwable {
        engine = engineOver(new InMemoryLeaseBackend(), events);
        LeaseSpec spec = LeaseSpec.of("invoice-42", LeaseKind.CORRECTNESS).withNameTemplate("invoice-#{#id}");
        engine.run(spec, lease -> {
            assertThat(events.list).containsExactly("acquiring invoice-42 invoice-#{#id} CORRECTNESS in-memory",
                    "granted invoice-42 token " + lease.token().value());
            String reentered = engine.run(LeaseSpec.of("invoice-42", LeaseKind.CORRECTNESS), inner -> "reentered", null);
            assertThat(reentered).isEqualTo("reentered");
            assertThat(events.list).as("re-entering a held lease is not an acquire").hasSize(2);
            return null;
        }, null);
        assertThat(events.list).hasSize(3).last().isEqualTo("closed invoice-42");
    }

    @Test
    void aBusyLeaseIsBusyAndAFailedAcquireIsAFailure() throws Throwable {
        engine = engineOver(new InMemoryLeaseBackend(), events);
        LeaseSpec spec = LeaseSpec.of("report", LeaseKind.EFFICIENCY);
        String granted;
        try (Lease held = engine.acquire(spec)) {
            granted = "granted report token " + held.token().value();
            assertThat(engine.tryAcquire(spec)).isEmpty();
            assertThatThrownBy(() -> engine.acquire(spec)).isInstanceOf(LeaseUnavailableException.class);
        }
        assertThat(events.list).filteredOn(event -> !event.startsWith("acquiring")).containsExactly(
                granted, "busy report", "busy report", "closed report");

        ScriptedBackend failing = new ScriptedBackend();
        failing.acquireFailures.set(1);
        LeaseEngine other = engineOver(failing, events);
        try {
            events.list.clear();
            assertThatThrownBy(() -> other.acquire(LeaseSpec.of("ledger", LeaseKind.CORRECTNESS)))
                    .isInstanceOf(LeaseUnavailableException.class);
            assertThat(events.list).containsExactly("acquiring ledger ledger CORRECTNESS scripted",
                    "failed ledger LeaseUnavailableException");
        }
        finally {
            other.close();
        }
    }

    @Test
    void renewalsAndEachLossCauseAreReported() throws Throwable {
        ScriptedBackend scripted = new ScriptedBackend();
        engine = engineOver(scripted, events);
        LeaseSpec spec = LeaseSpec.of("ledger", LeaseKind.CORRECTNESS).withTtl(millis(600)).withRenewEvery(millis(100));

        Lease refused = engine.acquire(spec);
        await().atMost(seconds(10)).until(() -> events.list.contains("renewed ledger true"));
        scripted.renewal.set(ScriptedBackend.Renewal.REFUSE);
        await().atMost(seconds(10)).until(() -> events.list.contains("lost ledger backend-reported token 1"));
        assertThat(events.list).contains("renewed ledger false");
        refused.close();

        scripted.renewal.set(ScriptedBackend.Renewal.FAIL);
        Lease failed = engine.acquire(spec);
        await().atMost(seconds(10)).until(() -> events.list.contains("lost ledger renewal-failed token 2"));
        failed.close();

        scripted.renewal.set(ScriptedBackend.Renewal.HANG);
        Lease expired = engine.acquire(spec);
        await().atMost(seconds(10)).until(() -> events.list.contains("lost ledger deadline token 3"));
        expired.close();
        scripted.hang.countDown();

        scripted.renewal.set(ScriptedBackend.Renewal.OK);
        Lease reported = engine.acquire(spec);
        scripted.lastListener.get().leaseLost("holder node deleted");
        assertThat(events.list).contains("lost ledger backend-reported token 4");
        reported.close();

        engine.acquire(spec);
        engine.close();
        assertThat(events.list).contains("lost ledger shutdown token 5").last().isEqualTo("closed ledger");
    }

    /**
     * The loss is told once the holder's thread was interrupted, so a test that times the loss by it (lease-etcd's
     * HolderVersusSuccessor) never takes the interrupt for earlier than it was.
     */
    @Test
    void aLossIsToldOnceTheHoldersThreadWasInterrupted() throws Throwable {
        ScriptedBackend scripted = new ScriptedBackend();
        Thread holder = Thread.currentThread();
        AtomicBoolean told = new AtomicBoolean();
        AtomicBoolean interruptedWhenTold = new AtomicBoolean();
        engine = engineOver(scripted, new LeaseEngineListener() {
            @Override
            public void lost(LeaseDescription lease, OptionalLong token, LossCause cause) {
                interruptedWhenTold.set(holder.isInterrupted());
                told.set(true);
            }
        });
        assertThatThrownBy(() -> engine.run(LeaseSpec.of("ledger", LeaseKind.CORRECTNESS), lease -> {
            new Thread(() -> scripted.lastListener.get().leaseLost("holder node deleted")).start();
            // Waits without clearing the interrupt flag, which the listener reads.
            long until = System.nanoTime() + seconds(10).toNanos();
            while (!told.get() && System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            return null;
        }, null)).isInstanceOf(LeaseLostException.class);
        assertThat(told).as("told of the loss").isTrue();
        assertThat(interruptedWhenTold).as("the holder's thread was interrupted when the listener was told").isTrue();
    }

    @Test
    void aTokenTheFenceRefusesAtGrantIsAFailedAcquireAndAFenceLoss() {
        ScriptedBackend scripted = new ScriptedBackend();
        engine = LeaseEngine.builder(BackendRouter.of(routes(scripted))).grantFence((resource, token) -> {
            throw new IllegalStateException("fence of " + resource + " is at 99");
        }).listeners(List.of(events)).build();
        assertThatThrownBy(() -> engine.acquire(LeaseSpec.of("ledger", LeaseKind.CORRECTNESS).withFence("invoice-1")))
                .isInstanceOf(LeaseLostException.class);
        assertThat(events.list).containsExactly("acquiring ledger ledger CORRECTNESS scripted",
                "lost ledger fence-refused token 1", "failed ledger LeaseLostException");
    }

    /**
     * An election's attempts are not acquires (a follower's would be an acquire always pending): each time it seeks
     * leadership it is one campaign, won or stopped, and a term it won is held and lost like any lease.
     */
    @Test
    void anElectionCampaignsInsteadOfAcquiring() {
        InMemoryLeaseBackend store = new InMemoryLeaseBackend();
        engine = engineOver(store, events);
        Recorder takeOver = new Recorder();
        Recorder stop = new Recorder();
        LeaseSpec spec = LeaseSpec.of("reports", LeaseKind.EFFICIENCY);
        String campaigning = "campaigning reports EFFICIENCY in-memory";
        try (LeaseEngine second = engineOver(store, takeOver); LeaseEngine third = engineOver(store, stop);
                Election first = engine.election(spec, IGNORED); Election next = second.election(spec, IGNORED);
                Election stopped = third.election(spec, IGNORED)) {
            first.start();
            await().atMost(seconds(10)).until(first::isLeader);
            long firstTerm = first.token().orElseThrow().value();
            next.start();
            stopped.start();
            await().atMost(seconds(10)).until(() -> takeOver.list.contains(campaigning)
                    && stop.list.contains(campaigning));
            stopped.close();
            assertThat(stop.list).as("a follower that never led").containsExactly(campaigning, "stopped reports");

            first.close();
            await().atMost(seconds(10)).until(next::isLeader);
            long secondTerm = next.token().orElseThrow().value();
            assertThat(events.list).containsExactly(campaigning, "won reports token " + firstTerm,
                    "lost reports shutdown token " + firstTerm, "closed reports");
            next.close();
            assertThat(takeOver.list).containsExactly(campaigning, "won reports token " + secondTerm,
                    "lost reports shutdown token " + secondTerm, "closed reports");
        }
    }

    @Test
    void aListenerThatThrowsChangesNothing() throws Throwable {
        LeaseEngineListener broken = new LeaseEngineListener() {
            @Override
            public Acquisition acquiring(LeaseDescription lease) {
                throw new IllegalStateException("metrics are broken");
            }

            @Override
            public void lost(LeaseDescription lease, OptionalLong token, LossCause cause) {
                throw new IllegalStateException("metrics are broken");
            }
        };
        ScriptedBackend scripted = new ScriptedBackend();
        engine = LeaseEngine.builder(BackendRouter.of(routes(scripted))).listeners(List.of(broken, events)).build();
        String done = engine.run(LeaseSpec.of("ledger", LeaseKind.CORRECTNESS), lease -> "done", null);
        assertThat(done).isEqualTo("done");
        Lease lease = engine.acquire(LeaseSpec.of("ledger", LeaseKind.CORRECTNESS));
        scripted.lastListener.get().leaseLost("holder node deleted");
        assertThat(lease.isValid()).isFalse();
        assertThat(events.list).contains("closed ledger", "lost ledger backend-reported token 2");
    }

    private static final Election.Listener IGNORED = new Election.Listener() {
        @Override
        public void granted(LeadershipGrantedEvent event) {
        }

        @Override
        public void revoked(LeadershipRevokedEvent event) {
        }
    };

    private static LeaseEngine engineOver(LeaseBackend<?> backend, LeaseEngineListener listener) {
        return LeaseEngine.builder(BackendRouter.of(routes(backend))).listeners(List.of(listener)).build();
    }

    private static Map<LeaseKind, LeaseBackend<?>> routes(LeaseBackend<?> backend) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        routes.put(LeaseKind.EFFICIENCY, backend);
        return routes;
    }

    /** Every event as one line, in order. */
    private static final class Recorder implements LeaseEngineListener {

        final List<String> list = new CopyOnWriteArrayList<>();

        @Override
        public Acquisition acquiring(LeaseDescription lease) {
            list.add("acquiring " + lease.name() + " " + lease.nameTemplate() + " " + lease.kind() + " "
                    + lease.backend());
            return new Acquisition() {
                @Override
                public Runnable granted(OptionalLong token) {
                    list.add("granted " + lease.name() + " token "
                            + (token.isPresent() ? String.valueOf(token.getAsLong()) : "none"));
                    return () -> list.add("closed " + lease.name());
                }

                @Override
                public void busy() {
                    list.add("busy " + lease.name());
                }

                @Override
                public void failed(Throwable error) {
                    list.add("failed " + lease.name() + " " + error.getClass().getSimpleName());
                }
            };
        }

        @Override
        public Campaign campaigning(LeaseDescription election) {
            list.add("campaigning " + election.name() + " " + election.kind() + " " + election.backend());
            return new Campaign() {
                @Override
                public Runnable won(OptionalLong token) {
                    list.add("won " + election.name() + " token "
                            + (token.isPresent() ? String.valueOf(token.getAsLong()) : "none"));
                    return () -> list.add("closed " + election.name());
                }

                @Override
                public void stopped() {
                    list.add("stopped " + election.name());
                }
            };
        }

        @Override
        public void renewed(LeaseDescription lease, boolean succeeded) {
            list.add("renewed " + lease.name() + " " + succeeded);
        }

        @Override
        public void lost(LeaseDescription lease, OptionalLong token, LossCause cause) {
            list.add("lost " + lease.name() + " " + cause.tag() + " token "
                    + (token.isPresent() ? String.valueOf(token.getAsLong()) : "none"));
        }
    }
}
