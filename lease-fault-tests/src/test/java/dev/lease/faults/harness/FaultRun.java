package dev.lease.faults.harness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.lease.LeaseKind;
import dev.lease.LeaseTemplate;
import dev.lease.core.LeaseEngine;
import dev.lease.faults.checker.FaultResults;
import dev.lease.faults.checker.History;
import dev.lease.faults.checker.HistoryChecker;
import dev.lease.faults.mutants.Mutant;
import dev.lease.faults.mutants.MutantRuns;
import dev.lease.faults.workload.EventSink;
import dev.lease.faults.workload.HolderMain;
import dev.lease.faults.workload.LeaderWorker;
import dev.lease.faults.workload.LeaseWorker;
import dev.lease.faults.workload.Ledger;
import dev.lease.faults.workload.Worker;
import dev.lease.testing.TestTiming;

/**
 * One fault scenario: its workers (threads of this JVM, child JVMs), the faults injected, and at the end the
 * history check, the results row and the verdict. Closing it stops whatever still runs.
 */
public final class FaultRun implements AutoCloseable {

    private static final Log log = LogFactory.getLog(FaultRun.class);

    public final History history;
    private final String scenario;
    private final String backend;
    private final LeaseKind kind;
    private final Ledger ledger;
    private final boolean fencedAtGrant;
    private final long startedAt = System.nanoTime();
    private final List<Worker> workers = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();
    private final List<ChildHolder> children = new ArrayList<>();
    private int faults;
    private boolean finished;

    public FaultRun(String scenario, String backend, LeaseKind kind, Ledger ledger) {
        this(scenario, backend, kind, ledger, false);
    }

    /**
     * @param fencedAtGrant whether every holder advances the ledger's fence at grant: then a stale write accepted
     *        after a successor's grant fails the run instead of being reported
     */
    public FaultRun(String scenario, String backend, LeaseKind kind, Ledger ledger, boolean fencedAtGrant) {
        this(scenario, backend, kind, ledger, fencedAtGrant, new History());
    }

    private FaultRun(String scenario, String backend, LeaseKind kind, Ledger ledger, boolean fencedAtGrant,
            History history) {
        this.history = history;
        this.scenario = scenario + Mutant.suffix();
        MutantRuns.started(scenario, kind);
        this.backend = backend;
        this.kind = kind;
        this.ledger = ledger;
        this.fencedAtGrant = fencedAtGrant;
    }

    /**
     * A run of a leadership workload: its lease name is an election's, its workers are {@link LeaderWorker}s
     * ({@link #leader}, and child JVMs in {@code mode=leader}), its history {@linkplain History#ofTerms() of terms}.
     */
    public static FaultRun leadership(String scenario, String backend, LeaseKind kind, Ledger ledger) {
        return new FaultRun(scenario, backend, kind, ledger, false, History.ofTerms());
    }

    /**
     * Starts a {@link LeaderWorker} thread in this JVM on {@code engine}, campaigning for the election
     * {@code config.lease()} and running {@code beforeWrite} before each write of its terms.
     */
    public LeaderWorker leader(int id, LeaseEngine engine, LeaseWorker.Config config, LeaseWorker.BeforeWrite beforeWrite) {
        return leader(id, engine, config, beforeWrite, ledger);
    }

    /**
     * Same, writing through {@code link}: see {@link #worker(int, LeaseTemplate, LeaseWorker.Config,
     * LeaseWorker.BeforeWrite, Ledger)}.
     */
    public LeaderWorker leader(int id, LeaseEngine engine, LeaseWorker.Config config, LeaseWorker.BeforeWrite beforeWrite,
            Ledger link) {
        return start(new LeaderWorker(id, engine, link, config, EventSink.of(history, id), beforeWrite), id);
    }

    /** Starts a worker thread in this JVM on {@code engine}. */
    public LeaseWorker worker(int id, LeaseTemplate engine, LeaseWorker.Config config) {
        return worker(id, engine, config, LeaseWorker.BeforeWrite.NONE);
    }

    /** Starts a worker thread in this JVM on {@code engine} that runs {@code beforeWrite} before each write. */
    public LeaseWorker worker(int id, LeaseTemplate engine, LeaseWorker.Config config, LeaseWorker.BeforeWrite beforeWrite) {
        return worker(id, engine, config, beforeWrite, ledger);
    }

    /**
     * Starts a worker thread in this JVM that writes through {@code link}: the same table as the run's ledger, reached
     * another way (through a proxy that faults can cut), while the check reads it straight.
     */
    public LeaseWorker worker(int id, LeaseTemplate engine, LeaseWorker.Config config, LeaseWorker.BeforeWrite beforeWrite,
            Ledger link) {
        return start(new LeaseWorker(id, engine, link, config, EventSink.of(history, id), beforeWrite), id);
    }

    private <W extends Worker> W start(W worker, int id) {
        Thread thread = new Thread(worker, scenario + "-worker-" + id);
        thread.setDaemon(true);
        workers.add(worker);
        threads.add(thread);
        thread.start();
        return worker;
    }

    /** The worker threads of this JVM started so far. */
    public List<Worker> workers() {
        return List.copyOf(workers);
    }

    /** Starts a child JVM holder; see {@link HolderMain} for {@code args}. */
    public ChildHolder child(int id, Map<String, String> args, Map<String, String> env) throws Exception {
        ChildHolder child = ChildHolder.start(scenario + "-child-" + id, id, history, Mutant.childArgs(args), env);
        children.add(child);
        return child;
    }

    /**
     * Kills {@code child} ({@code SIGKILL}, counted as a fault) and starts it again, with the same arguments, as worker
     * {@code worker} of the history; see {@link ChildHolder#restart}.
     */
    public ChildHolder killAndRestart(ChildHolder child, int worker) throws Exception {
        child.kill();
        fault("SIGKILL of child holder " + child.worker() + " while it held the lease, restarted with the same "
                + "arguments as worker " + worker, System.nanoTime());
        ChildHolder restarted = child.restart(scenario + "-child-" + worker, worker);
        children.add(restarted);
        return restarted;
    }

    /** Counts a fault, injected at {@code at} (losses are measured at the store, not here). */
    public void fault(String what, long at) {
        faults++;
        history.fault(what, at);
        log.info(scenario + ": fault " + faults + ": " + what);
    }

    /** Whether a worker other than {@code except} was granted the lease after {@code since}: a takeover happened. */
    public boolean grantedSince(long since, int except) {
        return history.ops().stream().anyMatch(op -> op.kind == History.Kind.ACQUIRE && op.ok() && op.worker != except
                && op.completedAt - since > 0);
    }

    /**
     * Whether a worker other than {@code except} had a write accepted after {@code since} with a token above
     * {@code above}: the fence has moved past {@code above}.
     */
    boolean writeAcceptedSince(long since, int except, long above) {
        return history.ops().stream().anyMatch(op -> op.kind == History.Kind.WRITE && op.ok() && op.worker != except
                && op.completedAt - since > 0 && op.token > above);
    }

    /**
     * The completed frozen write ({@linkplain History#forced forced}) of {@code worker} with {@code token}, if there is
     * one yet: a leader writes many times in one term, all with its token, and only the frozen one is the stale write.
     */
    History.Op completedFrozenWrite(int worker, long token) {
        return history.ops().stream().filter(op -> op.kind == History.Kind.WRITE && op.worker == worker && op.forced
                && op.outcome != History.Outcome.PENDING && op.token == token).findFirst().orElse(null);
    }

    /** How many grants {@code worker} got so far. */
    long grantsOf(int worker) {
        return history.ops().stream().filter(op -> op.kind == History.Kind.ACQUIRE && op.ok() && op.worker == worker)
                .count();
    }

    int faults() {
        return faults;
    }

    /** Stops the workers, checks the history against the ledger, records the results row and asserts safety. */
    public HistoryChecker.Verdict finish() throws Exception {
        stopAll();
        boolean fenced = kind == LeaseKind.CORRECTNESS;
        HistoryChecker.Verdict verdict = HistoryChecker.check(scenario, history, ledger.accepted(), fenced,
                fencedAtGrant);
        History.LossToInterrupt lossToInterrupt = history.lossToInterrupt(fenced);
        FaultResults.record(new FaultResults.Row(scenario, backend, kind.name(), verdict.cycles(), faults,
                verdict.writesAccepted(), verdict.writesRejected(), verdict.writesUnknown(), verdict.staleWritesAccepted(),
                fenced ? Integer.toString(verdict.staleWritesAfterGrant()) : "–",
                fenced ? "–" : Integer.toString(verdict.overlaps()), lossToInterrupt,
                Duration.ofNanos(System.nanoTime() - startedAt).toMillis() / 1000.0,
                fenced ? Integer.toString(HistoryChecker.staleWritesRefusedAfterWrite(history)) : "–"));
        log.info(scenario + ": " + verdict);
        Path dump = Path.of("target", "fault-histories", scenario + ".json");
        Files.createDirectories(dump.getParent());
        Files.writeString(dump, history.toJson());
        HistoryChecker.assertSafe(verdict, history);
        return verdict;
    }

    private void stopAll() throws Exception {
        if (finished) {
            return;
        }
        finished = true;
        workers.forEach(Worker::stop);
        for (ChildHolder child : children) {
            child.close();
        }
        for (Thread thread : threads) {
            thread.join(TestTiming.seconds(30).toMillis());
            if (thread.isAlive()) {
                thread.interrupt();
                thread.join(TestTiming.seconds(10).toMillis());
            }
            if (thread.isAlive()) {
                // It may still write, or complete ops, after the history was checked.
                history.problem("worker thread " + thread.getName() + " still alive after the join");
            }
        }
    }

    @Override
    public void close() throws Exception {
        stopAll();
    }
}
