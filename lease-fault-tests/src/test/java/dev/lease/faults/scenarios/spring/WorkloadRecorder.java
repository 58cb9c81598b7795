package dev.lease.faults.scenarios.spring;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import dev.lease.faults.checker.History.Kind;
import dev.lease.faults.checker.History.Op;
import dev.lease.faults.checker.History.Outcome;
import dev.lease.FencingToken;
import dev.lease.Lease;
import dev.lease.LeaseContext;
import dev.lease.LeaseLostException;
import dev.lease.LeaseUnavailableException;
import dev.lease.faults.checker.History;
import dev.lease.faults.harness.FaultRun;
import dev.lease.faults.mutants.Mutant;
import dev.lease.faults.workload.FrozenWrite;
import dev.lease.faults.workload.LeaseWorker;
import dev.lease.faults.workload.Ledger;
import dev.lease.fence.StaleTokenException;

/**
 * What the beans of the Spring workload scenarios do, recorded the way {@link LeaseWorker} records its cycles: an
 * ACQUIRE invoked by the caller before the proxied call and completed OK with the token when the body starts (read
 * from {@link LeaseContext}), the WRITE, the RELEASE invoked as the body ends and completed by the caller, and the
 * interrupts. One {@link FaultRun} per lease name, since tokens of different names say nothing about each other.
 *
 * <p>Besides the history, it keeps the life of every leased section (when its body started and ended, whether it
 * saw an interrupt, whether its lease was still valid at the end) for {@link #checkLostSectionsInterrupted()}.
 */
final class WorkloadRecorder {

    /** How a body writes the protected resource. */
    enum Writer {
        /** In a transaction of its own (the ledger's). */
        OWN_TRANSACTION,
        /** In the caller's transaction: the bean method is {@code @Transactional} inside the lease. */
        CALLERS_TRANSACTION
    }

    /** Work a body does inside its section before its own work: a nested leased call. */
    @FunctionalInterface
    interface Inside {

        Inside NONE = () -> {
        };

        void run() throws InterruptedException;
    }

    /** One leased section as its body and its caller saw it. */
    static final class Section {
        final String lease;
        final int worker;
        final long token;
        final long acquireId;
        final long startedAt;
        /** How long the body means to work: a fault aimed at a loss inside strikes a section that works long. */
        final long holdMillis;
        volatile long endedAt;
        volatile long interruptedAt;
        volatile boolean validAtEnd;
        volatile Op release;
        /** How the proxied call ended for its caller: null while it runs, else "ok" or the exception's simple name. */
        volatile String outcome;
        /** Its write was frozen and then forced: it ran on past its loss on purpose, for the fence to stop. */
        volatile boolean forced;

        Section(String lease, int worker, long token, long acquireId, long startedAt, long holdMillis) {
            this.lease = lease;
            this.holdMillis = holdMillis;
            this.worker = worker;
            this.token = token;
            this.acquireId = acquireId;
            this.startedAt = startedAt;
        }

        boolean open() {
            return endedAt == 0;
        }

        int instance() {
            return worker / 100;
        }

        @Override
        public String toString() {
            return "section of worker " + worker + " on '" + lease + "' with token " + token + " (" + (outcome == null
                    ? "still running" : outcome) + (interruptedAt != 0 ? ", interrupted" : ", never interrupted")
                    + (validAtEnd ? ", lease valid at its end" : ", lease invalid at its end") + ")";
        }
    }

    /** A gate before the writes of one lease, for those of {@code only} (every writer when null). */
    private record Freezing(FrozenWrite gate, Writer only) {
    }

    private final Map<String, FaultRun> runs = new ConcurrentHashMap<>();
    private final Map<String, Freezing> freezing = new ConcurrentHashMap<>();
    private final Map<String, Ledger> ledgers = new ConcurrentHashMap<>();
    /** By lease name and ACQUIRE id: each run's history numbers its ops from 1. */
    private final Map<String, Section> byAcquire = new ConcurrentHashMap<>();
    private final List<Section> sections = new ArrayList<>();

    /** Records the sections of {@code lease} into {@code run}, their writes into {@code ledger}. */
    WorkloadRecorder lease(String lease, FaultRun run, Ledger ledger) {
        runs.put(lease, run);
        ledgers.put(lease, ledger);
        return this;
    }

    /**
     * Bodies of {@code lease} writing with {@code only} (any, when null) pass {@code gate} right before their write:
     * once armed it freezes the first of them there, deaf to interrupts, and that write goes ahead forced, with its
     * old token, when the gate lets it go.
     */
    WorkloadRecorder freezeWrites(String lease, FrozenWrite gate, Writer only) {
        freezing.put(lease, new Freezing(gate, only));
        return this;
    }

    History history(String lease) {
        FaultRun run = runs.get(lease);
        if (run == null) {
            throw new IllegalArgumentException("no run records lease '" + lease + "'");
        }
        return run.history;
    }

    /** The caller, before the proxied call. */
    Op invoke(String lease, int worker) {
        return history(lease).invoke(worker, Kind.ACQUIRE);
    }

    /**
     * The body of every leased bean method: completes the ACQUIRE with the token this thread holds, runs
     * {@code inside} (a nested leased call), works for {@code holdMillis} (interruptible), writes with the section's
     * token and invokes the RELEASE. An interrupt is recorded with the section's token and ends the body.
     */
    void body(String lease, int worker, Op acquire, long holdMillis, Writer writer, Inside inside)
            throws InterruptedException {
        Section section = enter(lease, worker, acquire, holdMillis);
        try {
            inside.run();
            Thread.sleep(holdMillis);
            write(section, writer, frozenBeforeWrite(section, writer));
            section.release = history(lease).invoke(worker, Kind.RELEASE);
        }
        catch (InterruptedException ex) {
            interrupted(section);
            if (!Mutant.swallowsInterrupts()) {
                throw ex;
            }
            // The mutant body: told that its lease is lost, it writes anyway (not forced: the history must take it
            // for a section that ignored its interrupt).
            write(section, writer, false);
            section.release = history(lease).invoke(worker, Kind.RELEASE);
        }
        finally {
            // An interrupt that came during a write (JDBC does not answer to it) or after the sleep is still one.
            if (Thread.currentThread().isInterrupted()) {
                interrupted(section);
            }
            section.validAtEnd = LeaseContext.find(lease).map(Lease::isValid).orElse(false);
            section.endedAt = System.nanoTime();
        }
    }

    private Section enter(String lease, int worker, Op acquire, long holdMillis) {
        Lease held = LeaseContext.find(lease).orElseThrow(() -> new IllegalStateException("body of '" + lease
                + "' runs without its lease bound to the thread"));
        long token = held.token().value();
        History history = history(lease);
        history.complete(acquire, Outcome.OK, token, null);
        Section section = new Section(lease, worker, token, acquire.id, acquire.completedAt, holdMillis);
        if (!held.isValid()) {
            history.problem("worker " + worker + " entered its section of '" + lease + "' (token " + token
                    + ") with a lease that was no longer valid");
        }
        synchronized (sections) {
            sections.add(section);
        }
        byAcquire.put(lease + '#' + acquire.id, section);
        return section;
    }

    /** Passes the lease's gate, if any; whether the write that follows is forced. */
    private boolean frozenBeforeWrite(Section section, Writer writer) throws InterruptedException {
        Freezing f = freezing.get(section.lease);
        if (f == null || (f.only() != null && f.only() != writer)) {
            return false;
        }
        LeaseWorker.BeforeWrite gate = f.gate().of(section.worker);
        gate.beforeWrite(section.token);
        boolean forced = gate.forcesWrite();
        section.forced = forced;
        if (forced && f.gate().interrupted() && section.interruptedAt == 0) {
            // The gate swallowed the interrupt and put it in the history; the section was told all the same.
            section.interruptedAt = System.nanoTime();
        }
        return forced;
    }

    private void write(Section section, Writer writer, boolean forced) {
        History history = history(section.lease);
        Op op = history.invoke(section.worker, Kind.WRITE);
        if (forced) {
            history.forced(op.id);
        }
        Ledger ledger = ledgers.get(section.lease);
        if (writer == Writer.CALLERS_TRANSACTION) {
            boolean[] refused = { false };
            // Only the transaction's end says whether the row is in the table.
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCompletion(int status) {
                    if (status == STATUS_COMMITTED) {
                        history.complete(op, Outcome.OK, section.token, null);
                    }
                    else if (refused[0]) {
                        history.complete(op, Outcome.FAIL, section.token, "stale token refused by the fence");
                    }
                    else {
                        history.complete(op, Outcome.UNKNOWN, section.token, "transaction ended with status " + status);
                    }
                }
            });
            try {
                ledger.writeInCallersTransaction(new FencingToken(section.lease, section.token), op.id);
            }
            catch (StaleTokenException ex) {
                refused[0] = true;
                throw ex;
            }
            return;
        }
        try {
            boolean accepted = ledger.write(section.lease, section.token, op.id);
            history.complete(op, accepted ? Outcome.OK : Outcome.FAIL, section.token,
                    accepted ? null : "stale token refused by the fence");
        }
        catch (RuntimeException ex) {
            history.complete(op, Outcome.UNKNOWN, section.token, ex.toString());
        }
    }

    private void interrupted(Section section) {
        if (section.interruptedAt == 0) {
            long at = System.nanoTime();
            section.interruptedAt = at;
            history(section.lease).interrupted(section.worker, section.token, at);
        }
    }

    /**
     * The caller, after the proxied call returned ({@code failure} null) or threw: completes the RELEASE, or the
     * ACQUIRE when the body never started. A call that returned without running its body was skipped (whenBusy =
     * SKIP).
     */
    void finish(String lease, int worker, Op acquire, Throwable failure) {
        Throwable cause = unwrap(failure);
        History history = history(lease);
        Section section = byAcquire.get(lease + '#' + acquire.id);
        if (section == null) {
            if (cause == null) {
                history.complete(acquire, Outcome.FAIL, -1, "skipped: busy (whenBusy = SKIP)");
            }
            else if (cause instanceof LeaseUnavailableException) {
                history.complete(acquire, Outcome.FAIL, -1, cause.getMessage());
            }
            else if (cause instanceof LeaseLostException lost) {
                // Granted, then lost before the body started: the store made the grant, so its token is kept.
                history.complete(acquire, Outcome.FAIL, lost.token().map(FencingToken::value).orElse(-1L),
                        "lost before the body started: " + cause.getMessage());
            }
            else {
                history.complete(acquire, Outcome.UNKNOWN, -1, cause.toString());
            }
            return;
        }
        section.outcome = cause == null ? "ok" : cause.getClass().getSimpleName();
        if (section.release != null) {
            history.complete(section.release, cause == null ? Outcome.OK
                    : cause instanceof LeaseLostException ? Outcome.FAIL : Outcome.UNKNOWN, section.token,
                    cause == null ? null : cause.toString());
        }
    }

    static Throwable unwrap(Throwable failure) {
        Throwable cause = failure;
        while ((cause instanceof ExecutionException || cause instanceof CompletionException)
                && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }

    List<Section> sections() {
        synchronized (sections) {
            return List.copyOf(sections);
        }
    }

    /** A section of {@code lease} whose body runs now, if any. */
    Section openSection(String lease) {
        return sections().stream().filter(s -> s.lease.equals(lease) && s.open()).findFirst().orElse(null);
    }

    /** Whether a worker of an instance other than {@code instance} was granted {@code lease} after {@code since}. */
    boolean grantedSince(String lease, long since, int instance) {
        return history(lease).ops().stream().anyMatch(op -> op.kind == Kind.ACQUIRE && op.ok()
                && op.worker / 100 != instance && op.completedAt - since > 0);
    }

    /**
     * Every section whose lease was lost while its body ran was interrupted there. A section's lease was lost while
     * inside when a grant of a higher token of the same name was acknowledged before its body ended, or when its call
     * ended with {@link LeaseLostException} and the lease was already invalid as the body ended (a lease lost after
     * the body's last statement comes too late to interrupt anything). A section whose body never ended is a thread
     * still running. Violations are added to the run's problems, so its check fails.
     *
     * <p>To be replaced by the checker's own property once interrupts carry their section's token in the history.
     *
     * @return the sections lost while inside, so that a scenario can show it exercised the property
     */
    List<Section> checkLostSectionsInterrupted() {
        List<Section> lost = new ArrayList<>();
        for (Section section : sections()) {
            History history = history(section.lease);
            if (section.open()) {
                history.problem(section + ": its body never ended");
                continue;
            }
            Op successor = history.ops().stream().filter(op -> op.kind == Kind.ACQUIRE && op.ok()
                    && op.token > section.token && op.completedAt - section.endedAt < 0).findFirst().orElse(null);
            boolean lostAtTheEnd = "LeaseLostException".equals(section.outcome) && !section.validAtEnd;
            if (successor == null && !lostAtTheEnd) {
                continue;
            }
            lost.add(section);
            if (section.interruptedAt == 0) {
                history.problem(section + " was lost while its body ran"
                        + (successor != null ? " (worker " + successor.worker + " was granted token " + successor.token
                                + " before it ended)" : "") + ", but the body was never interrupted");
            }
        }
        return lost;
    }
}
