package dev.lease.faults.scenarios.kafka;

import static dev.lease.testing.TestTiming.seconds;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.stream.Collectors;

import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.faults.checker.FaultResults;
import dev.lease.faults.checker.History;
import dev.lease.faults.harness.Soak;
import dev.lease.faults.harness.ZooKeeperHolder;
import dev.lease.faults.mutants.FaultScenarios;
import dev.lease.faults.mutants.Mutant;
import dev.lease.faults.mutants.MutantRuns;
import dev.lease.faults.scenarios.zookeeper.ZooKeeperScenarios;
import dev.lease.fence.kafka.FencedKafkaTemplate;
import dev.lease.fence.kafka.MutantGrantSteps;
import dev.lease.testing.TcpProxy;

/**
 * Kafka as the fenced sink: a relay instance publishes through one {@link FencedKafkaTemplate} under ZooKeeper leases
 * (a real server), to spring-kafka-test's embedded KRaft broker. In every round a holder's section opens a transaction
 * and sends, then loses its lease while the transaction is open (its ZooKeeper link is frozen until its session
 * expires); a successor of the same instance is granted the name and publishes; only then does the stale section go on
 * and try to commit. A {@code read_committed} consumer must see none of the stale section's records (its transaction
 * was open across the successor's grant: each one that became visible is a stale record visible after a successor's
 * grant), and every record the successor's commits acknowledged exactly once. The three rows differ in the fault: the
 * holder paused (nothing sent while its store link is frozen), the store link frozen while the section goes on sending
 * (deaf to the loss interrupt), and every broker connection killed (TCP reset) between the successor's grant and the
 * stale commit. A fourth row, {@link #childPausedHolder()}, pauses a holder for real: a child JVM under
 * {@code kill -STOP}, its successor this JVM.
 *
 * <p>The fence mutant: the template takes a new grant over without initialising its producer again
 * ({@link MutantGrantSteps}), so the stale transaction is never aborted by the broker and commits; the scenarios must
 * see its records. The child row's mutant is its own (see there).
 */
class KafkaFaultScenariosTest extends FaultScenarios {

    private static final Duration SESSION = seconds(2);
    private static final Duration BOUND = seconds(30);
    private static final String LEASE = "relay";
    private static final int SUCCESSOR_RECORDS = 2;
    private static final String CHILD_LEASE = "relay-child";
    private static final List<String> PAUSE_POINTS = List.of("open-transaction", "before-send");

    private enum Fault {
        PAUSED_HOLDER, FROZEN_STORE_LINK, KILLED_BROKER_CONNECTION
    }

    static TestingServer zookeeper;
    static KafkaRelay kafka;

    @BeforeParameterizedClassInvocation
    static void start() throws Exception {
        zookeeper = new TestingServer(ZooKeeperScenarios.spec(-1), true);
        kafka = KafkaRelay.start();
    }

    @AfterParameterizedClassInvocation
    static void stop() throws Exception {
        if (kafka != null) {
            kafka.close();
            kafka = null;
        }
        if (zookeeper != null) {
            zookeeper.close();
            zookeeper = null;
        }
    }

    @Test
    void pausedHolder() throws Exception {
        scenario("kafka-paused-holder", Fault.PAUSED_HOLDER);
    }

    @Test
    void frozenStoreLink() throws Exception {
        scenario("kafka-frozen-store-link", Fault.FROZEN_STORE_LINK);
    }

    @Test
    void killedBrokerConnection() throws Exception {
        scenario("kafka-killed-broker-connection", Fault.KILLED_BROKER_CONNECTION);
    }

    /** What the rounds saw: the values the successors' commits acknowledged, and how the stale sections ended. */
    private static final class Outcomes {
        final List<String> acknowledged = new ArrayList<>();
        /** What a round found wrong on its own (the child's refusal, the tokens). */
        final List<String> problems = new ArrayList<>();
        /** How many records the stale holders committed while they held ({@code held@<token>}), all to be visible. */
        int heldCommitted;
        int staleRefused;
        int staleCommitted;
        int successorFailed;
        String last;
    }

    private static void scenario(String name, Fault fault) throws Exception {
        String scenario = name + Mutant.suffix();
        // The detection table's row is the scenario's own; the suffix only keeps a mutant run's topic and logs apart.
        MutantRuns.started(name, LeaseKind.CORRECTNESS.name(), true);
        String topic = scenario + "-" + System.nanoTime();
        kafka.broker().addTopics(topic);
        // One handover shows a mutant (its stale transaction commits every time); the real run does two.
        int rounds = Mutant.active() == Mutant.NONE ? Soak.rounds(2) : 1;
        long begin = System.nanoTime();
        Outcomes outcomes = new Outcomes();
        try (FencedKafkaTemplate<String, String> template = new FencedKafkaTemplate<>(kafka.producerFactory())) {
            if (Mutant.active() == Mutant.FENCE) {
                MutantGrantSteps.withoutInitialisationAtGrant(template);
            }
            for (int round = 0; round < rounds; round++) {
                round(template, topic, round, fault, outcomes);
            }
        }
        finish(scenario, "zookeeper, Kafka (embedded KRaft)", rounds, topic, outcomes, begin);
    }

    /** Reads what a {@code read_committed} consumer sees, checks it and records the row. */
    private static void finish(String scenario, String backend, int rounds, String topic, Outcomes outcomes,
            long begin) {
        List<String> visible = kafka.committedUpTo(topic, outcomes.last, BOUND);
        check(scenario, visible, outcomes);
        Map<String, Long> perGrant = visible.stream().collect(Collectors.groupingBy(
                value -> value.substring(value.indexOf('@') + 1), TreeMap::new, Collectors.counting()));
        int stale = (int) visible.stream().filter(value -> value.startsWith("stale-")).count();
        FaultResults.record(new FaultResults.Row(scenario, backend, "CORRECTNESS", rounds,
                rounds, visible.size(), outcomes.staleRefused, outcomes.successorFailed, stale,
                Integer.toString(stale), "records visible per grant: " + perGrant,
                new History.LossToInterrupt(List.of(), List.of(), 0, 0), (System.nanoTime() - begin) / 1e9,
                Integer.toString(outcomes.staleRefused)));
    }

    /**
     * One handover: the stale holder (its ZooKeeper client behind a proxy) sends in an open transaction; its store link
     * freezes; the successor is granted when the stale session expires, publishes, and lets the stale section go on
     * while it still holds the lease; then publishes once more after the stale section ended.
     */
    private static void round(FencedKafkaTemplate<String, String> template, String topic, int round, Fault fault,
            Outcomes outcomes) throws Exception {
        LeaseSpec spec = LeaseSpec.of(LEASE, LeaseKind.CORRECTNESS).withTtl(SESSION).withWaitFor(BOUND);
        CountDownLatch inTransaction = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        AtomicReference<Throwable> staleThrew = new AtomicReference<>();
        try (TcpProxy staleLink = new TcpProxy(zookeeper.getPort());
                ZooKeeperHolder stale = ZooKeeperHolder.connect(staleLink.address(), SESSION);
                ZooKeeperHolder next = ZooKeeperHolder.connect(zookeeper.getConnectString(), SESSION)) {
            CompletableFuture<Void> staleRun = CompletableFuture.runAsync(() -> {
                try {
                    stale.engine().execute(spec, lease -> {
                        String token = "@" + lease.token().value();
                        try {
                            return template.executeInTransaction(sender -> {
                                sender.send(topic, LEASE, "stale-" + round + "-0" + token);
                                inTransaction.countDown();
                                int sent = 1;
                                while (!awaitDeaf(resume, Duration.ofMillis(100))) {
                                    if (fault == Fault.FROZEN_STORE_LINK) {
                                        sender.send(topic, LEASE, "stale-" + round + "-" + sent++ + token);
                                    }
                                }
                                Thread.interrupted(); // deaf: it goes on as if it still held the lease
                                return sender.send(topic, LEASE, "stale-" + round + "-" + sent + token);
                            });
                        }
                        catch (RuntimeException ex) {
                            staleThrew.set(ex);
                            return null;
                        }
                    });
                }
                catch (RuntimeException lost) {
                    // the engine's own report of the loss, after the section: the template's outcome is what counts
                }
            });
            if (!inTransaction.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("the first holder never sent in round " + round + ": " + staleRun);
            }
            staleLink.freeze();
            next.engine().execute(spec, lease -> {
                String token = "@" + lease.token().value();
                for (int i = 0; i < SUCCESSOR_RECORDS; i++) {
                    successorSends(template, topic, "next-" + round + "-" + i + token, outcomes);
                }
                if (fault == Fault.KILLED_BROKER_CONNECTION) {
                    kafka.link().reset();
                }
                resume.countDown();
                staleRun.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
                successorSends(template, topic, "next-" + round + "-after" + token, outcomes);
                return null;
            });
            if (staleThrew.get() == null) {
                outcomes.staleCommitted++;
            }
            else {
                outcomes.staleRefused++;
            }
            staleLink.unfreeze();
        }
    }

    /**
     * The relay paused for real: the stale holder is a child JVM ({@link KafkaHolderMain}) with a template of its own,
     * this JVM the successor instance with another. In each round the child commits one record while it holds, then
     * is stopped ({@code kill -STOP}) at a pause point of its next transaction: with it open (a record of it already on
     * the broker, not committed), and in the other round begun with nothing sent. Its ZooKeeper session expires; this
     * JVM is granted the name and publishes; the child resumes ({@code kill -CONT}), and once its engine told it of the
     * loss (so that no interrupt lands in the Kafka client's commit in the broker's place) goes on as a paused process
     * would, sends and commits. The broker must refuse it (the successor's producer initialised the same
     * {@code transactional.id}, derived from the lease name): the child must report {@code StaleTokenException} on that
     * id caused by the fenced producer, and none of its records after its first commit may become visible.
     *
     * <p>The fence mutant here: each instance publishes under a transactional id of its own (what fences across
     * instances is the id they share). The template's mutant, no initialisation at grant, cannot show across instances:
     * an instance's first producer is always initialised, and a successor whose old producer was fenced initialises a
     * new one before it sends; the scenarios above catch it within one instance.
     */
    @Test
    void childPausedHolder() throws Exception {
        String scenario = "kafka-child-paused-holder" + Mutant.suffix();
        MutantRuns.started("kafka-child-paused-holder", LeaseKind.CORRECTNESS.name(), true);
        String topic = scenario + "-" + System.nanoTime();
        kafka.broker().addTopics(topic);
        // Both pause points each round; one round with its transaction open shows the mutant.
        List<String> points = new ArrayList<>();
        for (int round = 0; round < Soak.rounds(1); round++) {
            points.addAll(Mutant.active() == Mutant.NONE ? PAUSE_POINTS : PAUSE_POINTS.subList(0, 1));
        }
        long begin = System.nanoTime();
        Outcomes outcomes = new Outcomes();
        try (ZooKeeperHolder successor = ZooKeeperHolder.connect(zookeeper.getConnectString(), SESSION);
                FencedKafkaTemplate<String, String> template = new FencedKafkaTemplate<>(kafka.producerFactory(),
                        childPrefix(0))) {
            for (int round = 0; round < points.size(); round++) {
                childRound(scenario + "-" + round, successor, template, topic, points.get(round), round + 1, outcomes);
            }
        }
        finish(scenario, "zookeeper, Kafka (embedded KRaft), child JVM", points.size(), topic, outcomes, begin);
    }

    /**
     * One handover: the child is granted, commits, stops at {@code at}; this JVM is granted once the child's session
     * expired, publishes, resumes the child, waits for its outcome, and publishes once more while it holds.
     */
    private static void childRound(String name, ZooKeeperHolder successor,
            FencedKafkaTemplate<String, String> template, String topic, String at, int worker, Outcomes outcomes)
            throws Exception {
        Map<String, String> args = new HashMap<>();
        args.put("connect", zookeeper.getConnectString());
        args.put("session-ms", Long.toString(SESSION.toMillis()));
        args.put("lease", CHILD_LEASE);
        args.put("bootstrap", kafka.bootstrap());
        args.put("topic", topic);
        args.put("prefix", childPrefix(worker));
        args.put("at", at);
        try (KafkaChild child = KafkaChild.start(name, args)) {
            long staleToken = Long.parseLong(child.await("PAUSE_POINT", BOUND.multipliedBy(2))[0]);
            outcomes.heldCommitted++;
            child.pause();
            LeaseSpec spec = LeaseSpec.of(CHILD_LEASE, LeaseKind.CORRECTNESS).withTtl(SESSION).withWaitFor(BOUND);
            successor.engine().execute(spec, lease -> {
                String token = "@" + lease.token().value();
                if (lease.token().value() <= staleToken) {
                    outcomes.problems.add(at + ": the successor's token " + token + " is not above the paused "
                            + "holder's " + staleToken);
                }
                for (int i = 0; i < SUCCESSOR_RECORDS; i++) {
                    successorSends(template, topic, "next-" + i + token, outcomes);
                }
                child.resume();
                child.await("INT", BOUND);
                child.go();
                String[] outcome = child.await("OUTCOME", BOUND);
                String transactionalId = template.transactionalId(CHILD_LEASE);
                if (outcome[0].equals("STALE") && outcome.length > 3 && outcome[2].equals(transactionalId)
                        && outcome[3].equals("broker")) {
                    outcomes.staleRefused++;
                }
                else {
                    outcomes.problems.add(at + ": the paused holder with token " + staleToken + " was not refused by "
                            + "the broker with StaleTokenException on " + transactionalId + ": "
                            + String.join(" ", outcome));
                }
                successorSends(template, topic, "next-after" + token, outcomes);
                return null;
            });
            child.awaitExit(BOUND);
        }
    }

    /** The real run: one transactional-id prefix for every instance; the mutant: one of its own per instance. */
    private static String childPrefix(int worker) {
        return Mutant.active() == Mutant.FENCE ? "relay-" + worker + "." : "relay.";
    }

    private static void successorSends(FencedKafkaTemplate<String, String> template, String topic, String value,
            Outcomes outcomes) {
        try {
            template.send(topic, LEASE, value);
            outcomes.acknowledged.add(value);
            outcomes.last = value;
        }
        catch (RuntimeException ex) {
            // Only under the mutant is the successor's producer the stale section's, still inside its transaction.
            outcomes.successorFailed++;
        }
    }

    /** Waits as a paused thread does: an interrupt does not end the wait. */
    private static boolean awaitDeaf(CountDownLatch latch, Duration step) {
        try {
            return latch.await(step.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ignored) {
            return false;
        }
    }

    private static void check(String scenario, List<String> visible, Outcomes outcomes) {
        List<String> problems = new ArrayList<>(outcomes.problems);
        long held = visible.stream().filter(value -> value.startsWith("held@")).count();
        if (held != outcomes.heldCommitted) {
            problems.add(held + " of the " + outcomes.heldCommitted + " records committed while held are visible");
        }
        visible.stream().filter(value -> value.startsWith("stale-"))
                .forEach(value -> problems.add("stale record visible after a successor's grant: " + value));
        Map<String, Long> counts = visible.stream().collect(Collectors.groupingBy(Function.identity(),
                Collectors.counting()));
        counts.forEach((value, count) -> {
            if (count > 1) {
                problems.add("record visible " + count + " times: " + value);
            }
        });
        outcomes.acknowledged.stream().filter(value -> !counts.containsKey(value))
                .forEach(value -> problems.add("acknowledged record lost: " + value));
        if (outcomes.staleCommitted > 0) {
            problems.add(outcomes.staleCommitted + " stale transaction(s) committed without an error");
        }
        if (!problems.isEmpty()) {
            throw new AssertionError(scenario + ": " + problems.size() + " problem(s), records " + visible + "\n  "
                    + String.join("\n  ", problems));
        }
    }
}
