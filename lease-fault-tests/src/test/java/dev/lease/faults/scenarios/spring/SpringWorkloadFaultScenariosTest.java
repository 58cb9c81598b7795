package dev.lease.faults.scenarios.spring;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;

import dev.lease.faults.checker.History.Kind;
import dev.lease.faults.checker.History.Op;
import dev.lease.faults.scenarios.spring.WorkloadApp.AsyncJob;
import dev.lease.faults.scenarios.spring.WorkloadApp.NestedOuter;
import dev.lease.faults.scenarios.spring.WorkloadApp.TransactionalJob;
import dev.lease.faults.scenarios.spring.WorkloadApp.Waiter;
import dev.lease.faults.scenarios.spring.WorkloadRecorder.Section;
import dev.lease.faults.scenarios.spring.WorkloadRecorder.Writer;
import dev.lease.LeaseKind;
import dev.lease.faults.checker.History;
import dev.lease.faults.checker.HistoryChecker;
import dev.lease.faults.harness.FaultRun;
import dev.lease.faults.harness.Seeds;
import dev.lease.faults.harness.Soak;
import dev.lease.faults.harness.StaleWrites;
import dev.lease.faults.mutants.Mutant;
import dev.lease.faults.mutants.FaultScenarios;
import dev.lease.faults.scenarios.zookeeper.ZooKeeperScenarios;
import dev.lease.faults.workload.FrozenWrite;
import dev.lease.faults.workload.Ledger;
import dev.lease.testing.PostgresServer;

/**
 * Fault scenarios of what applications do with the library, through the real Spring proxy and auto-configuration:
 * two or three application contexts of {@link WorkloadApp} on ZooKeeper, each with its own link to the server
 * through a proxy, and the ledger (the real JdbcFence) in a PostgreSQL of its own. Nested sections lost together,
 * {@code @Transactional} inside {@code @Leased}, {@code @Async}, {@code @Scheduled} SKIP jobs, waiters during store
 * outages and an application closed in the middle of its cycles. Every scenario is checked by
 * {@link HistoryChecker} through {@link FaultRun}, and in addition every section lost while its body ran must have
 * been interrupted there ({@link WorkloadRecorder#checkLostSectionsInterrupted()}).
 *
 * <p>Seeds: {@code -Dlease-test.seed=N} replays the random hold times of a run (faults strike on
 * conditions, so their moments vary). Against the {@linkplain Mutant#SWALLOWED_INTERRUPT swallowed-interrupt mutant}
 * every body catches its interrupt and writes anyway, as the plain workers do.
 *
 * <p>Every scenario starts with one {@linkplain #forcedStaleWrite forced stale write}: its own faults rarely make a
 * body write after a successor's write, so without it a fence that does not compare would go unnoticed.
 */
class SpringWorkloadFaultScenariosTest extends FaultScenarios {

    private static final Log log = LogFactory.getLog(SpringWorkloadFaultScenariosTest.class);

    private static final String BACKEND = "zookeeper (Spring)";
    private static final Duration SESSION = seconds(2);
    /** How long workers wait for a busy lease: longer than a session, so a cut-off holder's lease is taken over. */
    private static final Duration WAIT_FOR = seconds(3);
    private static final Duration BOUND = seconds(30);
    /**
     * How long after its waitFor a waiter may end, store outage or not: the engine gives its last grant request at
     * least one second (Acquirer.MIN_REQUEST_TIME) and stops waiting for a backend call at the request's deadline;
     * the rest is room for scheduling on a loaded machine.
     */
    private static final Duration WAITER_BOUND = seconds(3);
    private static final Duration POLL = Duration.ofMillis(5);
    /** How recently a section must have started for a fault to strike well inside it. */
    private static final Duration FRESH = Duration.ofMillis(200);
    /**
     * A hold that outlasts the lease once its holder is cut off (the local deadline is at most one ttl away), so a
     * fault that strikes as such a section starts is a loss inside it; most holds are short, for the cycles.
     */
    private static final long LONG_HOLD_MILLIS = SESSION.toMillis() + 500;
    private static final long SEED = Seeds.of("spring-workloads");

    private static PostgresServer postgres;
    private static DataSource ledgerDatabase;
    private static TestingServer zookeeper;

    @BeforeParameterizedClassInvocation
    static void start() throws Exception {
        postgres = PostgresServer.start();
        // One instance: transactions bind connections by DataSource, and the beans' must be the ledger's.
        ledgerDatabase = postgres.dataSource();
        zookeeper = new TestingServer(ZooKeeperScenarios.spec(-1), true);
    }

    @AfterParameterizedClassInvocation
    static void stop() throws Exception {
        if (zookeeper != null) {
            zookeeper.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    /**
     * Nested {@code @Leased} sections, an outer and an inner name on one thread, cut off from ZooKeeper together
     * while the inner one works: both are lost with the session, the thread is interrupted in the inner body and
     * again in the outer one, and neither writes with its stale token.
     */
    @Test
    void nestedSectionsLostTogether() throws Exception {
        Ledger outerLedger = ledger(WorkloadApp.OUTER);
        Ledger innerLedger = ledger(WorkloadApp.INNER);
        try (FaultRun outer = new FaultRun("spring-zookeeper-nested-outer", BACKEND, LeaseKind.CORRECTNESS, outerLedger);
                FaultRun inner = new FaultRun("spring-zookeeper-nested-inner", BACKEND, LeaseKind.CORRECTNESS,
                        innerLedger);
                Instances instances = new Instances()) {
            WorkloadRecorder recorder = new WorkloadRecorder().lease(WorkloadApp.OUTER, outer, outerLedger)
                    .lease(WorkloadApp.INNER, inner, innerLedger);
            for (int id = 1; id <= 2; id++) {
                SpringInstance instance = instances.start(id, recorder, Map.of());
                NestedOuter bean = instance.bean(NestedOuter.class);
                for (int slot = 1; slot <= 2; slot++) {
                    instance.drive(slot, WorkloadApp.OUTER, (worker, acquire, random) -> bean.outer(worker, acquire,
                            hold(random), random.nextInt(200)));
                }
            }
            forcedStaleWrite(outer, recorder, instances, WorkloadApp.OUTER, null);
            // A fault strikes as a long inner section starts; whether the outer section is still inside when its
            // loss is declared depends on timing, so a few more faults are allowed until both were lost together.
            int faults = Soak.rounds(2);
            for (int round = 0; round < faults || (round < faults + 4 && lostTogether(recorder.sections()) == 0);
                    round++) {
                Section section = awaitFreshSection(recorder, WorkloadApp.INNER, 0, LONG_HOLD_MILLIS);
                cutOff(recorder, instances.get(section.instance()), WorkloadApp.INNER, List.of(outer, inner),
                        "inside the inner section of worker " + section.worker);
            }
            instances.stopAll(outer.history);
            List<Section> lost = recorder.checkLostSectionsInterrupted();
            // Not only pairs classified lost: the outer lease can run out first, and its interrupt then ends the inner
            // body a moment before the inner lease runs out too (the inner call ends with InterruptedException).
            long together = lostTogether(recorder.sections());
            log.info("nested: " + lost.size() + " section(s) lost inside, " + together + " nested pair(s) lost together");
            outer.finish();
            inner.finish();
            assertThat(together).as("nested sections lost together, both interrupted").isPositive();
        }
    }

    /**
     * {@code @Transactional} inside {@code @Leased} (the fenced write commits in the method's transaction, while the
     * lease is held) and {@code @Async @Leased} (taken, held and lost on the executor's thread), on one lease, with
     * the holder's instance cut off from ZooKeeper again and again.
     */
    @Test
    void transactionalAndAsyncSectionsCutOff() throws Exception {
        try (Instances instances = new Instances()) {
            transactionalAndAsync("spring-zookeeper-transactional-async", "zookeeper (Spring)", instances,
                    Soak.rounds(2));
        }
    }

    /**
     * The same on the JDBC backend, its lease table in a PostgreSQL of its own (not the ledger's), each instance
     * reaching it through its own proxy: a cut-off holder's renewals stall, its local deadline declares the lease
     * lost, and another instance is granted it once it expired on the database's clock.
     */
    @Test
    void transactionalAndAsyncSectionsCutOffFromTheJdbcStore() throws Exception {
        try (PostgresServer store = PostgresServer.start();
                Instances instances = new Instances(new SpringInstance.Store("jdbc", store.port()))) {
            transactionalAndAsync("spring-jdbc-transactional-async", "jdbc (PostgreSQL, Spring)", instances,
                    Soak.rounds(1));
        }
    }

    private static void transactionalAndAsync(String scenario, String backend, Instances instances, int faults)
            throws Exception {
        String lease = "wl-tx-async";
        Ledger ledger = ledger(lease);
        try (FaultRun run = new FaultRun(scenario, backend, LeaseKind.CORRECTNESS, ledger)) {
            WorkloadRecorder recorder = new WorkloadRecorder().lease(lease, run, ledger);
            for (int id = 1; id <= 2; id++) {
                SpringInstance instance = instances.start(id, recorder, Map.of());
                driveTransactionalAndAsync(instance, lease);
            }
            forcedStaleWrite(run, recorder, instances, lease, Writer.CALLERS_TRANSACTION);
            for (int round = 0; round < faults; round++) {
                Section section = awaitFreshSection(recorder, lease, 0, LONG_HOLD_MILLIS);
                cutOff(recorder, instances.get(section.instance()), lease, List.of(run),
                        "inside the section of worker " + section.worker);
            }
            // Both kinds of bean must have written; a short run may not have given the lease to each yet.
            await().atMost(BOUND).pollInterval(POLL)
                    .until(() -> acceptedWritesOfSlot(run, 1) > 0 && acceptedWritesOfSlot(run, 51) > 0);
            instances.stopAll(run.history);
            List<Section> lost = recorder.checkLostSectionsInterrupted();
            HistoryChecker.Verdict verdict = run.finish();
            assertThat(lost).as("sections lost while inside").isNotEmpty();
            assertThat(acceptedWritesOfSlot(run, 1)).as("@Transactional writes accepted").isPositive();
            assertThat(acceptedWritesOfSlot(run, 51)).as("@Async writes accepted").isPositive();
            assertThat(verdict.staleWritesAccepted()).isZero();
        }
    }

    /**
     * {@code @Scheduled} + {@code @Leased(whenBusy = SKIP)} on three instances: one run at a time, the others skip
     * their tick (recorded as refused acquires), and cutting the running instance off hands the job to another.
     */
    @Test
    void scheduledSkipJobsAcrossInstances() throws Exception {
        String lease = WorkloadApp.SCHEDULED_LEASE;
        Ledger ledger = ledger(lease);
        try (FaultRun run = new FaultRun("spring-zookeeper-scheduled-skip", BACKEND, LeaseKind.CORRECTNESS, ledger);
                Instances instances = new Instances()) {
            WorkloadRecorder recorder = new WorkloadRecorder().lease(lease, run, ledger);
            for (int id = 1; id <= 3; id++) {
                instances.start(id, recorder, Map.of("workload.tick", "100"), WorkloadOptions.Scheduling.class);
            }
            forcedStaleWrite(run, recorder, instances, lease, null);
            for (int round = 0; round < Soak.rounds(1); round++) {
                Section section = awaitFreshSection(recorder, lease, 0, LONG_HOLD_MILLIS);
                cutOff(recorder, instances.get(section.instance()), lease, List.of(run),
                        "while its scheduled run held the lease");
            }
            long since = System.nanoTime();
            await().atMost(BOUND).pollInterval(POLL).until(() -> run.history.ops().stream()
                    .anyMatch(op -> op.kind == Kind.RELEASE && op.ok() && op.completedAt - since > 0));
            instances.closeAll();
            List<Section> lost = recorder.checkLostSectionsInterrupted();
            List<String> overlaps = overlaps(recorder.sections());
            overlaps.forEach(run.history::problem);
            long skips = run.history.ops().stream().filter(op -> op.kind == Kind.ACQUIRE
                    && op.outcome == History.Outcome.FAIL && op.detail.startsWith("skipped")).count();
            Set<Integer> ranOn = recorder.sections().stream().map(Section::instance).collect(Collectors.toSet());
            log.info("scheduled: " + recorder.sections().size() + " runs on instances " + ranOn + ", " + skips
                    + " skipped ticks, " + lost.size() + " run(s) lost inside");
            run.finish();
            assertThat(skips).as("ticks skipped while another instance ran the job").isPositive();
            assertThat(ranOn).as("instances that ran the job").hasSizeGreaterThanOrEqualTo(2);
        }
    }

    /**
     * Waiters with {@code waitFor} during store outages (every instance cut off at once, then the server stopped):
     * every call ends with a grant or LeaseUnavailableException within its waitFor plus a bound, none hangs, and no
     * body runs without a valid lease (checked as it starts, and its write is fenced).
     *
     * <p>The bound is {@link #WAITER_BOUND}: the engine stops waiting for a backend call at the request's deadline
     * instead of sitting through Curator's retries while the store is unreachable (before it did, calls with a waitFor
     * of 1.5 s ended up to 14.5 s after it, some reporting the lease "held by someone else"). The longest overrun is
     * logged.
     */
    @Test
    void waitersDuringStoreOutages() throws Exception {
        String lease = "wl-waiters";
        Duration waitFor = Duration.ofMillis(1500);
        Ledger ledger = ledger(lease);
        try (FaultRun run = new FaultRun("spring-zookeeper-waiters-outage", BACKEND, LeaseKind.CORRECTNESS, ledger);
                Instances instances = new Instances()) {
            WorkloadRecorder recorder = new WorkloadRecorder().lease(lease, run, ledger);
            for (int id = 1; id <= 2; id++) {
                SpringInstance instance = instances.start(id, recorder,
                        Map.of("workload.waiter-wait-for", waitFor.toMillis() + "ms"));
                Waiter waiter = instance.bean(Waiter.class);
                for (int slot = 1; slot <= 3; slot++) {
                    instance.drive(slot, lease, (worker, acquire, random) -> waiter.run(lease, worker, acquire,
                            100 + random.nextInt(600)));
                }
            }
            forcedStaleWrite(run, recorder, instances, lease, null);
            // A short run stops the server; a soak run also cuts every instance off at once, in turns.
            for (int round = 0; round < Soak.rounds(2) - 1; round++) {
                awaitFreshSection(recorder, lease, 0);
                long downAt = System.nanoTime();
                if (round % 2 == 0) {
                    zookeeper.stop();
                    run.fault("stopped the ZooKeeper server", downAt);
                    awaitOutageSeen(run, downAt);
                    zookeeper.restart();
                }
                else {
                    instances.all().forEach(i -> i.proxy.freeze());
                    run.fault("cut every instance off ZooKeeper (all proxies frozen)", downAt);
                    awaitOutageSeen(run, downAt);
                    instances.all().forEach(i -> i.proxy.unfreeze());
                }
                long upAt = System.nanoTime();
                await().atMost(BOUND).pollInterval(POLL).until(() -> recorder.grantedSince(lease, upAt, -1));
            }
            instances.stopAll(run.history);
            List<Section> lost = recorder.checkLostSectionsInterrupted();
            long overrun = 0;
            for (Op acquire : run.history.ops()) {
                if (acquire.kind != Kind.ACQUIRE) {
                    continue;
                }
                long late = acquire.completedAt - acquire.invokedAt - waitFor.toNanos();
                overrun = Math.max(overrun, late);
                if (late > WAITER_BOUND.toNanos()) {
                    run.history.problem("acquire " + acquire.id + " of worker " + acquire.worker + " ended "
                            + TimeUnit.NANOSECONDS.toMillis(late) + " ms after its waitFor (" + acquire.detail + ")");
                }
            }
            long unavailable = run.history.ops().stream().filter(op -> op.kind == Kind.ACQUIRE
                    && op.outcome == History.Outcome.FAIL && op.token < 0).count();
            log.info("waiters: longest wait beyond waitFor " + TimeUnit.NANOSECONDS.toMillis(overrun) + " ms, "
                    + unavailable + " LeaseUnavailableException(s), " + lost.size() + " section(s) lost inside");
            run.finish();
            assertThat(unavailable).as("waiters that gave up with LeaseUnavailableException").isPositive();
        }
    }

    /**
     * An application closed in the middle of its cycles (threads calling a {@code @Transactional} leased method and
     * {@code @Async} leased calls): the close lets every section of that instance end, leaves no thread of it
     * running, no write of it comes after, and the other instances take over.
     */
    @Test
    void contextClosedInTheMiddleOfCycles() throws Exception {
        String lease = "wl-close";
        Ledger ledger = ledger(lease);
        try (FaultRun run = new FaultRun("spring-zookeeper-close-mid-cycle", BACKEND, LeaseKind.CORRECTNESS, ledger);
                Instances instances = new Instances()) {
            WorkloadRecorder recorder = new WorkloadRecorder().lease(lease, run, ledger);
            for (int id = 1; id <= 3; id++) {
                driveTransactionalAndAsync(instances.start(id, recorder, Map.of()), lease);
            }
            forcedStaleWrite(run, recorder, instances, lease, Writer.CALLERS_TRANSACTION);
            int rounds = Soak.rounds(2);
            for (int round = 0; round < rounds; round++) {
                // The oldest instance goes; a new one replaces it while more rounds are to come.
                int id = round + 1;
                SpringInstance victim = instances.get(id);
                Section section = awaitFreshSection(recorder, lease, id);
                assertThat(victim.liveThreads()).as("threads of instance " + id + " (its group sees them)")
                        .anyMatch(name -> name.contains("EventThread")).anyMatch(name -> name.contains("-driver-"));
                long closingAt = System.nanoTime();
                victim.close();
                long closedAt = System.nanoTime();
                run.fault("closed the context of instance " + id + " while worker " + section.worker
                        + " was inside its section", closingAt);
                List<Section> open = recorder.sections().stream().filter(s -> s.instance() == victim.id && s.open())
                        .toList();
                if (!open.isEmpty()) {
                    run.history.problem("instance " + id + " closed with sections still running: " + open);
                }
                awaitGone(run, victim);
                for (Op write : run.history.ops()) {
                    if (write.kind == Kind.WRITE && write.worker / 100 == id && write.invokedAt - closedAt > 0) {
                        run.history.problem("worker " + write.worker + " wrote after its context was closed: " + write.id);
                    }
                }
                await().atMost(BOUND).pollInterval(POLL).until(() -> recorder.grantedSince(lease, closedAt, id));
                if (round + 1 < rounds) {
                    driveTransactionalAndAsync(instances.start(id + 3, recorder, Map.of()), lease);
                }
            }
            instances.stopAll(run.history);
            recorder.checkLostSectionsInterrupted();
            run.finish();
        }
    }

    /**
     * The stale write the fence exists for, through the real proxy: the next body of {@code lease} that writes with
     * {@code writer} (any, when null) freezes right before its fenced write, deaf to interrupts, and its instance is
     * cut off from the lease store until another instance was granted the lease and had a write accepted with a
     * newer token; then the link heals and the frozen write goes ahead, forced, with its old token. The fence must
     * refuse it: in the caller's transaction, StaleTokenException rolls the transaction back.
     */
    private static void forcedStaleWrite(FaultRun run, WorkloadRecorder recorder, Instances instances, String lease,
            Writer writer) throws Exception {
        FrozenWrite gate = new FrozenWrite(run.history);
        recorder.freezeWrites(lease, gate, writer);
        StaleWrites.frozenAcross(run, gate, "cut the instance off its lease store (proxy frozen)", worker -> {
            SpringInstance victim = instances.get(worker / 100);
            victim.proxy.freeze();
            return victim.proxy::unfreeze;
        });
    }

    /** Inner sections that ended interrupted inside an outer section of the same worker that ended interrupted too. */
    private static long lostTogether(List<Section> sections) {
        return sections.stream().filter(s -> s.lease.equals(WorkloadApp.INNER) && s.interruptedAt != 0 && !s.open())
                .filter(in -> sections.stream().anyMatch(out -> out.lease.equals(WorkloadApp.OUTER)
                        && out.worker == in.worker && out.interruptedAt != 0 && !out.open()
                        && out.startedAt - in.startedAt < 0 && out.endedAt - in.endedAt > 0))
                .count();
    }

    private static void driveTransactionalAndAsync(SpringInstance instance, String lease) {
        TransactionalJob transactional = instance.bean(TransactionalJob.class);
        AsyncJob async = instance.bean(AsyncJob.class);
        instance.drive(1, lease, (worker, acquire, random) -> transactional.run(lease, worker, acquire, hold(random)));
        instance.drive(51, lease, (worker, acquire, random) -> instance.awaitAsync(async.run(lease, worker, acquire,
                hold(random)), BOUND));
    }

    /** Mostly short holds, for the cycles; one in four long enough to be lost inside when cut off. */
    private static long hold(java.util.Random random) {
        return random.nextInt(4) == 0 ? LONG_HOLD_MILLIS + random.nextInt(300) : 50 + random.nextInt(400);
    }

    /**
     * Waits for a section of {@code lease} (of instance {@code instance}, or any when 0) whose body started a moment
     * ago, so that a fault strikes well inside it.
     */
    private static Section awaitFreshSection(WorkloadRecorder recorder, String lease, int instance) {
        return awaitFreshSection(recorder, lease, instance, 0);
    }

    /** Same, for a section that means to work at least {@code minHoldMillis}. */
    private static Section awaitFreshSection(WorkloadRecorder recorder, String lease, int instance,
            long minHoldMillis) {
        return await().atMost(BOUND).pollInterval(POLL).until(() -> recorder.sections().stream()
                .filter(s -> s.lease.equals(lease) && s.open() && (instance == 0 || s.instance() == instance)
                        && s.holdMillis >= minHoldMillis && System.nanoTime() - s.startedAt < FRESH.toNanos())
                .findFirst().orElse(null), s -> s != null);
    }

    /** Cuts {@code victim} off its lease store until an instance other than it was granted {@code lease}. */
    private static void cutOff(WorkloadRecorder recorder, SpringInstance victim, String lease, List<FaultRun> runs,
            String when) {
        victim.proxy.freeze();
        long at = System.nanoTime();
        runs.forEach(run -> run.fault("cut instance " + victim.id + " off its lease store (proxy frozen) " + when, at));
        try {
            await().atMost(BOUND).pollInterval(POLL).until(() -> recorder.grantedSince(lease, at, victim.id));
        }
        finally {
            victim.proxy.unfreeze();
        }
    }

    /** Waits until a caller gave up during the outage that began at {@code since}, and past the session timeout. */
    private static void awaitOutageSeen(FaultRun run, long since) {
        await().atMost(BOUND.multipliedBy(2)).pollInterval(POLL).until(() -> run.history.ops().stream()
                .anyMatch(op -> op.kind == Kind.ACQUIRE && op.outcome == History.Outcome.FAIL
                        && op.completedAt - since > 0) && System.nanoTime() - since > SESSION.toNanos() * 3 / 2);
    }

    /** Waits until the closed instance has no thread left; one that stays is a problem of the run. */
    private static void awaitGone(FaultRun run, SpringInstance closed) {
        try {
            await().atMost(BOUND).pollInterval(Duration.ofMillis(50))
                    .until(() -> !closed.driversAlive() && closed.liveThreads().isEmpty());
        }
        catch (org.awaitility.core.ConditionTimeoutException ex) {
            run.history.problem("instance " + closed.id + " still runs threads " + closed.liveThreads() + " "
                    + BOUND + " after its context was closed");
        }
    }

    private static long acceptedWritesOfSlot(FaultRun run, int slot) {
        return run.history.ops().stream().filter(op -> op.kind == Kind.WRITE && op.ok() && op.worker % 100 == slot)
                .count();
    }

    /**
     * Sections of different workers whose bodies ran at the same time. A forced section is left out: its body was
     * frozen past its loss on purpose, and the fence refused its write.
     */
    static List<String> overlaps(List<Section> sections) {
        List<Section> sorted = new ArrayList<>(sections);
        sorted.removeIf(s -> s.open() || s.forced);
        sorted.sort(Comparator.comparingLong(s -> s.startedAt));
        List<String> found = new ArrayList<>();
        Section last = null;
        for (Section section : sorted) {
            if (last != null && section.startedAt - last.endedAt < 0 && section.worker != last.worker) {
                found.add("two runs at once: " + last + " and " + section);
            }
            if (last == null || section.endedAt - last.endedAt > 0) {
                last = section;
            }
        }
        return found;
    }

    private static Ledger ledger(String resource) {
        return new Ledger(ledgerDatabase, Ledger.Check.FENCED, resource);
    }

    /** The instances of a scenario, closed at its end whatever happened. */
    private static final class Instances implements AutoCloseable {

        private final Map<Integer, SpringInstance> byId = new HashMap<>();
        private final SpringInstance.Store store;

        /** Instances on ZooKeeper. */
        Instances() {
            this(new SpringInstance.Store("zookeeper", zookeeper.getPort()));
        }

        Instances(SpringInstance.Store store) {
            this.store = store;
        }

        SpringInstance start(int id, WorkloadRecorder recorder, Map<String, Object> properties,
                Class<?>... configurations) throws Exception {
            Map<String, Object> props = new HashMap<>(Map.of("workload.wait-for", WAIT_FOR.toMillis() + "ms",
                    "workload.waiter-wait-for", WAIT_FOR.toMillis() + "ms", "workload.tick", "100",
                    "workload.long-hold-ms", Long.toString(LONG_HOLD_MILLIS)));
            props.putAll(properties);
            SpringInstance instance = null;
            for (int attempt = 1; instance == null; attempt++) {
                try {
                    instance = SpringInstance.start(id, store, SESSION, recorder, ledgerDatabase, SEED, props,
                            configurations);
                }
                catch (java.util.concurrent.ExecutionException ex) {
                    // The connection timeout is capped at the short session: on a loaded machine the first
                    // connection can miss it, which is the machine's trouble, not the scenario's.
                    if (attempt == 3) {
                        throw ex;
                    }
                    log.warn("instance " + id + " did not start (attempt " + attempt + "): " + ex.getCause());
                }
            }
            byId.put(id, instance);
            return instance;
        }

        SpringInstance get(int id) {
            return byId.get(id);
        }

        List<SpringInstance> all() {
            return List.copyOf(byId.values());
        }

        /** Stops every driver, then closes every context still open. */
        void stopAll(History history) throws InterruptedException {
            for (SpringInstance instance : byId.values()) {
                instance.stopDrivers(history);
            }
            closeAll();
        }

        void closeAll() {
            byId.values().stream().filter(i -> i.context.isActive()).forEach(SpringInstance::close);
        }

        @Override
        public void close() throws Exception {
            for (SpringInstance instance : byId.values()) {
                instance.stopDrivers(new History());
            }
            closeAll();
        }
    }
}
