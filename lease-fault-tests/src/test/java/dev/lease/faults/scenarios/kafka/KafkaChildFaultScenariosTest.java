package dev.lease.faults.scenarios.kafka;

import static dev.lease.testing.TestTiming.seconds;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
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

/**
 * A relay paused for real: the stale holder is a child JVM ({@link KafkaHolderMain}) publishing through its own
 * {@link FencedKafkaTemplate} under a ZooKeeper lease to the embedded KRaft broker this JVM runs. In each round the
 * child commits one record while it holds, then is stopped ({@code kill -STOP}) at a pause point of its next
 * transaction: with the transaction open (a record of it already on the broker, not committed) and, in the other
 * round, with the transaction begun and nothing sent yet. Its ZooKeeper session expires; this JVM, the successor
 * instance with a template of its own, is granted the name and publishes; then the child resumes ({@code kill -CONT}),
 * waits until its engine told it of the loss (so that no interrupt lands in the Kafka client's commit and takes the
 * broker's place), ignores that as a paused process would, sends and commits. The broker must refuse it (the
 * successor's producer initialised the same {@code transactional.id}, derived from the lease name, and fenced it): the
 * child must report {@code StaleTokenException} naming that id, a {@code read_committed} consumer must see none of its
 * records after its first commit, and every record of the successor exactly once.
 *
 * <p>The fence mutant here: every instance publishes under a transactional id of its own (the fence across instances
 * is the id they share). The template's own mutant, no initialisation at grant ({@code MutantGrantSteps}), cannot show
 * across instances: a new instance's first producer is always initialised, and a successor whose old producer was
 * fenced initialises a new one before it sends; {@link KafkaFaultScenariosTest} catches it within one instance.
 */
class KafkaChildFaultScenariosTest extends FaultScenarios {

    private static final Duration SESSION = seconds(2);
    private static final Duration BOUND = seconds(30);
    private static final String LEASE = "relay-child";
    private static final int SUCCESSOR_RECORDS = 2;
    private static final List<String> PAUSE_POINTS = List.of("open-transaction", "before-send");

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

    /** What the rounds saw. */
    private static final class Outcomes {
        final List<String> acknowledged = new ArrayList<>();
        final List<String> problems = new ArrayList<>();
        int staleRefused;
        int successorFailed;
        String last;
    }

    @Test
    void childPausedHolder() throws Exception {
        String scenario = "kafka-child-paused-holder" + Mutant.suffix();
        MutantRuns.started(scenario, LeaseKind.CORRECTNESS.name(), true);
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
                        prefix(0))) {
            for (int round = 0; round < points.size(); round++) {
                round(scenario + "-" + round, successor, template, topic, points.get(round), round + 1, outcomes);
            }
        }
        List<String> visible = kafka.committedUpTo(topic, outcomes.last, BOUND);
        check(scenario, visible, outcomes, points.size());
        Map<String, Long> perGrant = visible.stream().collect(Collectors.groupingBy(
                value -> value.replaceAll("^[a-z]+-(\\d+).*$", "$1"), TreeMap::new, Collectors.counting()));
        int stale = (int) visible.stream().filter(value -> value.startsWith("stale-")).count();
        FaultResults.record(new FaultResults.Row(scenario, "zookeeper, Kafka (embedded KRaft), child JVM",
                "CORRECTNESS", points.size(), points.size(), visible.size(), outcomes.staleRefused,
                outcomes.successorFailed, stale, Integer.toString(stale), "records visible per grant: " + perGrant,
                new History.LossToInterrupt(List.of(), List.of(), 0, 0), (System.nanoTime() - begin) / 1e9,
                Integer.toString(outcomes.staleRefused)));
    }

    /**
     * One handover: the child is granted, commits, stops at {@code at}; the successor is granted once the child's
     * session expired, publishes, resumes the child, waits for its outcome, and publishes once more while it holds.
     */
    private static void round(String name, ZooKeeperHolder successor, FencedKafkaTemplate<String, String> template,
            String topic, String at, int worker, Outcomes outcomes) throws Exception {
        Map<String, String> args = new HashMap<>();
        args.put("connect", zookeeper.getConnectString());
        args.put("session-ms", Long.toString(SESSION.toMillis()));
        args.put("lease", LEASE);
        args.put("bootstrap", kafka.bootstrap());
        args.put("topic", topic);
        args.put("prefix", prefix(worker));
        args.put("at", at);
        try (KafkaChild child = KafkaChild.start(name, args)) {
            long staleToken = Long.parseLong(child.await("PAUSE_POINT", BOUND.multipliedBy(2))[0]);
            child.pause();
            LeaseSpec spec = LeaseSpec.of(LEASE, LeaseKind.CORRECTNESS).withTtl(SESSION).withWaitFor(BOUND);
            successor.engine().execute(spec, lease -> {
                long token = lease.token().value();
                if (token <= staleToken) {
                    outcomes.problems.add(at + ": the successor's token " + token + " is not above the paused holder's "
                            + staleToken);
                }
                for (int i = 0; i < SUCCESSOR_RECORDS; i++) {
                    successorSends(template, topic, "next-" + token + "-" + i, outcomes);
                }
                child.resume();
                child.await("INT", BOUND);
                child.go();
                String[] outcome = child.await("OUTCOME", BOUND);
                String transactionalId = template.transactionalId(LEASE);
                if (outcome[0].equals("STALE") && outcome.length > 3 && outcome[2].equals(transactionalId)
                        && outcome[3].equals("broker")) {
                    outcomes.staleRefused++;
                }
                else {
                    outcomes.problems.add(at + ": the paused holder with token " + staleToken + " was not refused by "
                            + "the broker with StaleTokenException on " + transactionalId + ": "
                            + String.join(" ", outcome));
                }
                successorSends(template, topic, "next-" + token + "-after", outcomes);
                return null;
            });
            child.awaitExit(BOUND);
        }
    }

    /** The real run: one transactional-id prefix for every instance; the mutant: one of its own per instance. */
    private static String prefix(int worker) {
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
            outcomes.successorFailed++;
            outcomes.problems.add("the successor's send of " + value + " failed: " + ex);
        }
    }

    private static void check(String scenario, List<String> visible, Outcomes outcomes, int rounds) {
        List<String> problems = new ArrayList<>(outcomes.problems);
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
        long held = visible.stream().filter(value -> value.startsWith("held-")).count();
        if (held != rounds) {
            problems.add(held + " records the paused holders committed while they held are visible, not " + rounds);
        }
        if (!problems.isEmpty()) {
            throw new AssertionError(scenario + ": " + problems.size() + " problem(s), records " + visible + "\n  "
                    + String.join("\n  ", problems));
        }
    }
}
