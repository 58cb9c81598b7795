package dev.lease.samples.leader.demo;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.springframework.boot.Banner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.context.ConfigurableApplicationContext;

import dev.lease.leader.LeaderElections;
import dev.lease.leader.Leadership;
import dev.lease.samples.leader.LeaderApplication;
import dev.lease.samples.leader.OutboxRelay;
import dev.lease.samples.leader.ReminderJob;
import dev.lease.samples.leader.Reminders;
import dev.lease.samples.leader.demo.ThreadFaults.Fault;
import dev.lease.samples.leader.demo.ThreadFaults.Mode;
import dev.lease.samples.leader.demo.ThreadFaults.Site;
import dev.lease.samples.leader.demo.Timeline.Entry;
import dev.lease.testing.EmbeddedZooKeeper;
import dev.lease.testing.TcpProxy;
import dev.lease.testing.TestTiming;

/**
 * Runs three instances of the reminder service, A, B and C, in this JVM, each with a link of its own to ZooKeeper
 * (a {@link TcpProxy} the demo can freeze), all publishing to one Kafka broker, and plays four scenes:
 * <ol>
 * <li><b>One leader.</b> Exactly one instance leads {@code invoice-reminders}; its scheduled job writes batches and
 * its outbox relay publishes them to Kafka. On the others the job returns at once.</li>
 * <li><b>Interrupt.</b> The leader's link freezes while its job runs: its term ends, the job is interrupted and ends
 * with {@code LeaseLostException}, its relay stops, and another instance leads with a higher token.</li>
 * <li><b>Fence.</b> A paused leader: its relay thread is stuck with a batch sent to Kafka in a transaction not
 * committed yet, its job thread in a call that ignores interrupts, and its link freezes, standing for a GC pause or a
 * stalled VM. Another instance leads, publishes the relay's batch and writes the batch the job was preparing. The
 * paused leader then wakes up: the broker refuses the relay's commit, the table the job's write.</li>
 * <li><b>Yield.</b> {@code yieldLeadership()} hands the election to another instance at once.</li>
 * </ol>
 * It prints the timeline and the outbox (every batch written once) and exits 0 when everything went as told, 1 when
 * an expectation failed. Arguments are passed on to every instance; {@code --lease.zookeeper.connect-string} names a
 * ZooKeeper on this machine to use instead of an embedded one.
 */
public final class LeaderDemo {

    private final PrintStream out;
    private final Duration patience;
    private final Timeline timeline;
    private final ThreadFaults faults;
    private final List<String> problems = new ArrayList<>();
    private final List<DemoInstance> instances = new ArrayList<>();
    private final OutboxCheck outboxCheck;

    /**
     * A demo to run once.
     *
     * @param patience the longest any single step may take before the demo gives up; steps end as soon as what they
     *        wait for happens
     */
    LeaderDemo(PrintStream out, Duration patience) {
        this.out = out;
        this.patience = patience;
        this.timeline = new Timeline(out);
        this.faults = new ThreadFaults(timeline, patience);
        this.outboxCheck = new OutboxCheck(out, timeline, problems);
    }

    /**
     * Runs the demo and exits with 0 when everything went as told, 1 otherwise.
     *
     * @param args passed on to every instance
     */
    public static void main(String[] args) throws Exception {
        Result result = new LeaderDemo(System.out, TestTiming.seconds(60)).run(args);
        System.exit(result.problems().isEmpty() ? 0 : 1);
    }

    /**
     * What the demo saw: its timeline, the outbox rows written during the run, what a {@code read_committed} consumer
     * of the relay's topic saw, and what went otherwise than told.
     */
    record Result(List<Entry> timeline, List<Reminders.Message> outbox, KafkaCheck kafka, List<String> problems) {
    }

    Result run(String... args) throws Exception {
        // What Spring Boot does as an application starts: hold log output back until logging is configured (root
        // WARN, by the first instance), so that an embedded ZooKeeper starting now does not flood the timeline.
        LoggingSystem.get(LeaderDemo.class.getClassLoader()).beforeInitialize();
        String zookeeper = Arrays.stream(args).filter(a -> a.startsWith(DemoInstance.CONNECT_STRING)).findFirst()
                .map(a -> a.substring(DemoInstance.CONNECT_STRING.length()))
                .orElseGet(() -> EmbeddedZooKeeper.shared().connectString());
        String[] passedOn = Arrays.stream(args).filter(a -> !a.startsWith(DemoInstance.CONNECT_STRING)).toArray(String[]::new);
        section("(a) Instances A, B and C of the reminder service start, each with a link of its own to ZooKeeper. "
                + "Each schedules the job; only the leader of '" + Reminders.JOB + "' runs it.");
        List<Reminders.Message> outbox = List.of();
        KafkaCheck kafka = new KafkaCheck(problems);
        try {
            for (String name : List.of("A", "B", "C")) {
                instances.add(DemoInstance.start(name, DemoInstance.port(zookeeper), passedOn,
                        timeline.listener(name, faults)));
            }
            Reminders reminders = instances.get(0).context().getBean(Reminders.class);
            KafkaCheck.Frozen frozen = null;
            try {
                oneLeader();
                frozenLink(reminders);
                frozen = pausedLeader(reminders);
                yieldLeadership();
                awaitCondition(() -> reminders.unsent(1).isEmpty(), "the leader's relay to send every message");
            }
            catch (TimeoutException ex) {
                problems.add("The demo stopped early: " + ex.getMessage());
            }
            outbox = outboxCheck.writtenInThisRun(reminders);
            outboxCheck.everyBatchOnce(outbox);
            outboxCheck.tokensRise();
            // Only messages marked sent: those were committed to Kafka before they were marked.
            List<Reminders.Message> sent = outbox.stream().filter(m -> m.sentBy() != null).toList();
            kafka.read(instances.get(0).setting("spring.kafka.bootstrap-servers"),
                    instances.get(0).setting("reminders.topic"), patience);
            kafka.everyMessageOnce(sent);
            if (frozen != null) {
                kafka.nothingFrom(frozen, sent);
            }
        }
        finally {
            timeline.seal();
            faults.releaseAll();
            for (DemoInstance instance : instances) {
                instance.link().unfreeze();
                instance.context().close();
                instance.link().close();
            }
        }
        outboxCheck.print(outbox, kafka);
        out.println();
        if (problems.isEmpty()) {
            out.println("One leader at a time; no batch was written twice, and a read_committed consumer saw every "
                    + "batch once. The frozen link was stopped by the interrupt, the paused leader by the fences: the "
                    + "table refused its write, the broker its relay's commit.");
        }
        else {
            problems.forEach(p -> out.println("PROBLEM: " + p));
        }
        return new Result(timeline.entries(), outbox, kafka, List.copyOf(problems));
    }

    /** (a) Exactly one instance leads, runs the job and the relay; the job returns at once on the others. */
    private void oneLeader() throws Exception {
        DemoInstance leader = awaitLeader();
        await(0, e -> e.is(leader.name(), "WROTE"), leader.name() + "'s job to write a batch");
        for (DemoInstance other : others(leader)) {
            int mark = timeline.mark();
            Optional<Long> written = other.job().sendReminders();
            if (written.isPresent() || after(mark, e -> e.instance().equals(other.name())
                    && (e.what().equals("PREPARES") || e.what().equals("WROTE")))) {
                problems.add(other.name() + " ran the leader-only job although " + leader.name() + " leads");
            }
            else {
                timeline.note(other.name(), "SKIPPED", "sendReminders() called here returns Optional.empty() at once: "
                        + "not the leader, nothing written");
            }
        }
        for (DemoInstance instance : instances) {
            if (instance.relay().isRunning() != (instance == leader)) {
                problems.add(instance.name() + "'s outbox relay is " + (instance.relay().isRunning() ? "" : "not ")
                        + "running, and " + leader.name() + " leads");
            }
        }
    }

    /** (b) The leader's link freezes while its job runs: the job is interrupted, the relay stops, another leads. */
    private void frozenLink(Reminders reminders) throws Exception {
        DemoInstance leader = awaitLeader();
        long term = leader.token();
        section("(b) " + leader.name() + "'s link to ZooKeeper freezes while its job runs (session timeout "
                + leader.setting("lease.zookeeper.session-timeout") + ")");
        int mark = timeline.mark();
        Fault slow = faults.arm(leader.name(), Site.JOB, Mode.SLOW);
        if (!slow.awaitStruck(patience)) {
            throw new TimeoutException(leader.name() + "'s job did not start a run within " + patience);
        }
        Entry prepares = await(mark, e -> e.is(leader.name(), "PREPARES"), "the run");
        // The relay idle, so that the end of the term cuts no batch between its commit and its marking.
        awaitCondition(() -> reminders.unsent(1).isEmpty(), leader.name() + "'s relay to publish every batch");
        leader.link().freeze();
        int frozen = timeline.mark();
        timeline.note(leader.name(), "FAULT", "link to ZooKeeper frozen while its job prepares batch "
                + prepares.batch() + " (a slow step): its heartbeats stop getting through");

        Entry lost = await(frozen, e -> e.is(leader.name(), "LOST"), leader.name() + "'s run to end");
        if (!slow.interrupted()) {
            problems.add(leader.name() + "'s run ended (" + lost.text() + ") without being interrupted");
        }
        await(frozen, e -> e.is(leader.name(), "RELAY_STOPPED"), leader.name() + "'s relay to stop");
        DemoInstance next = awaitSuccessor(frozen, leader, term);
        await(frozen, e -> e.is(next.name(), "WROTE"), next.name() + "'s job to write a batch");
        if (after(frozen, e -> e.is(leader.name(), "WROTE"))) {
            problems.add(leader.name() + " wrote a batch after its link froze");
        }
        leader.link().unfreeze();
        timeline.note(leader.name(), "NOTE", "link heals: its client finds its session expired, opens a new one and "
                + "campaigns again");
    }

    /**
     * (c) A paused leader: its relay thread is held with a batch sent in an open Kafka transaction, its job thread
     * ignores the interrupt, and its link freezes. Once another instance has published the relay's batch and written
     * the job's, it wakes up: the broker refuses the relay's commit, the table the job's write.
     */
    private KafkaCheck.Frozen pausedLeader(Reminders reminders) throws Exception {
        DemoInstance leader = awaitLeader();
        long term = leader.token();
        section("(c) A paused leader: " + leader.name() + "'s relay thread gets stuck with a batch sent to Kafka in a "
                + "transaction not committed yet, its job thread in a call that ignores interrupts, and its link "
                + "freezes. Together they stand for a GC pause or a stalled VM, which stops the work and the "
                + "heartbeats alike.");
        Fault relayHeld = faults.arm(leader.name(), Site.RELAY, Mode.DEAF);
        if (!relayHeld.awaitStruck(patience)) {
            throw new TimeoutException(leader.name() + "'s relay did not send a batch within " + patience);
        }
        Fault deaf = faults.arm(leader.name(), Site.JOB, Mode.DEAF);
        if (!deaf.awaitStruck(patience)) {
            throw new TimeoutException(leader.name() + "'s job did not start a run within " + patience);
        }
        // Both threads are held right after announcing what they do: their last announcements are the held ones.
        long relayed = last(e -> e.is(leader.name(), "RELAYING")).batch();
        long batch = last(e -> e.is(leader.name(), "PREPARES")).batch();
        leader.link().freeze();
        int paused = timeline.mark();
        timeline.note(leader.name(), "FAULT", "paused with token " + term + ": relay stuck before committing batch "
                + relayed + ", job stuck preparing batch " + batch + ", link frozen (a GC pause or a stalled VM)");

        await(paused, e -> e.is(leader.name(), "REVOKED"), leader.name() + "'s term to end");
        DemoInstance next = awaitSuccessor(paused, leader, term);
        await(paused, e -> e.is(next.name(), "WROTE") && e.batch() == batch, next.name() + " to write batch " + batch);
        await(paused, e -> e.is(next.name(), "RELAYED") && e.batch() >= batch, next.name() + "'s relay to publish "
                + "batches " + relayed + " to " + batch);
        if (!deaf.interrupted()) {
            problems.add(leader.name() + "'s job thread was never interrupted although its term ended");
        }

        leader.link().unfreeze();
        int resumed = timeline.mark();
        timeline.note(leader.name(), "RESUMES", "the pause ends: still believing it leads with token " + term + ", the "
                + "relay commits batch " + relayed + " and the job writes batch " + batch);
        relayHeld.release();
        deaf.release();
        Entry commit = await(resumed, e -> e.instance().equals(leader.name())
                && List.of("RELAY_REFUSED", "RELAYED", "MARK_REFUSED").contains(e.what()),
                "the outcome of " + leader.name() + "'s relay commit");
        if (!commit.what().equals("RELAY_REFUSED")) {
            problems.add("The paused leader " + leader.name() + "'s relay committed with its old token: "
                    + commit.text());
        }
        Entry outcome = await(resumed, e -> e.is(leader.name(), "REFUSED") || e.is(leader.name(), "WROTE"),
                "the outcome of " + leader.name() + "'s write");
        if (outcome.what().equals("WROTE")) {
            problems.add("The paused leader " + leader.name() + "'s write with its old token was accepted");
        }
        Entry lost = await(resumed, e -> e.is(leader.name(), "LOST"), leader.name() + "'s run to end");
        if (!lost.text().contains("StaleTokenException")) {
            problems.add(leader.name() + "'s run ended otherwise than by the refused write: " + lost.text());
        }
        List<Reminders.Message> written = outboxCheck.writtenInThisRun(reminders).stream().filter(m -> m.batch() == batch)
                .toList();
        if (written.size() != 1 || !written.get(0).writtenBy().equals(next.name())) {
            problems.add("Batch " + batch + " should be in the outbox once, written by " + next.name() + ": "
                    + written);
        }
        return new KafkaCheck.Frozen(leader.name(), term);
    }

    /** (d) The leader yields: another instance leads at once, with a higher token. */
    private void yieldLeadership() throws Exception {
        DemoInstance leader = awaitLeader();
        long term = leader.token();
        section("(d) " + leader.name() + " calls yieldLeadership(), as before a rolling deploy");
        // Right after its relay published: the next batch to publish is a run of the job away, so no batch is cut
        // between its commit and its marking (which would send it again: at least once).
        await(timeline.mark(), e -> e.is(leader.name(), "RELAYED"), leader.name() + "'s relay to publish a batch");
        int mark = timeline.mark();
        long start = System.nanoTime();
        timeline.note(leader.name(), "YIELDS", "yieldLeadership(): its term ends and its lease is released at once");
        leader.leadership().yieldLeadership();
        Entry revoked = await(mark, e -> e.is(leader.name(), "REVOKED"), leader.name() + " to yield");
        if (!revoked.text().contains("yielded")) {
            problems.add(leader.name() + "'s term ended otherwise than by the yield: " + revoked.text());
        }
        DemoInstance next = awaitSuccessor(mark, leader, term);
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        await(mark, e -> e.is(next.name(), "WROTE"), next.name() + "'s job to write a batch");
        timeline.note(next.name(), "NOTE", String.format(Locale.ROOT, "led %.2fs after the yield: a released lease "
                + "is taken at once, no session had to expire", took.toMillis() / 1000.0));
    }

    /** Waits until exactly one instance leads, and returns it; more than one at a time is a problem. */
    private DemoInstance awaitLeader() throws InterruptedException, TimeoutException {
        List<DemoInstance> found = new ArrayList<>();
        boolean[] reported = {false};
        awaitCondition(() -> {
            List<DemoInstance> leaders = instances.stream().filter(i -> i.leadership().isLeader()).toList();
            if (leaders.size() > 1 && !reported[0]) {
                reported[0] = true;
                problems.add("Two leaders at once: " + leaders.stream().map(DemoInstance::name).toList());
            }
            if (leaders.size() == 1) {
                found.add(leaders.get(0));
            }
            return leaders.size() == 1;
        }, "one leader");
        return found.get(found.size() - 1);
    }

    /** Waits, from {@code mark} on, for another instance than {@code former} to be granted a term. */
    private DemoInstance awaitSuccessor(int mark, DemoInstance former, long formerToken)
            throws InterruptedException, TimeoutException {
        Entry granted = await(mark, e -> e.what().equals("GRANTED") && !e.instance().equals(former.name()),
                "another instance to lead");
        if (granted.token() <= formerToken) {
            problems.add(granted.instance() + " leads with token " + granted.token() + ", not above " + former.name()
                    + "'s " + formerToken);
        }
        return instances.stream().filter(i -> i.name().equals(granted.instance())).findFirst().orElseThrow();
    }

    private List<DemoInstance> others(DemoInstance instance) {
        return instances.stream().filter(i -> i != instance).toList();
    }

    private Entry last(Predicate<Entry> condition) {
        List<Entry> entries = timeline.entries();
        for (int i = entries.size() - 1; i >= 0; i--) {
            if (condition.test(entries.get(i))) {
                return entries.get(i);
            }
        }
        throw new IllegalStateException("No such entry on the timeline");
    }

    private boolean after(int mark, Predicate<Entry> condition) {
        return timeline.find(mark, condition).isPresent();
    }

    private void section(String title) {
        out.println();
        out.println(title);
    }

    /** Waits for the first timeline entry from {@code mark} on that matches, for {@link #patience} at most. */
    private Entry await(int mark, Predicate<Entry> condition, String what)
            throws InterruptedException, TimeoutException {
        List<Entry> found = new ArrayList<>(1);
        awaitCondition(() -> timeline.find(mark, condition).map(found::add).orElse(false), what);
        return found.get(0);
    }

    /** Polls {@code condition} until it holds, for {@link #patience} at most. */
    private void awaitCondition(BooleanSupplier condition, String what) throws InterruptedException, TimeoutException {
        long deadline = System.nanoTime() + patience.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new TimeoutException("Timed out after " + patience + " waiting for " + what);
            }
            Thread.sleep(10);
        }
    }
}
