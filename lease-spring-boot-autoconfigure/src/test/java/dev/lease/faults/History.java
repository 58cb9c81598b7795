package dev.lease.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Everything the workers of a fault scenario did, as operations with an invocation and a completion on the
 * monotonic clock, in the style of a Jepsen history. Thread-safe; the checker reads it after the run.
 *
 * <p>Times are {@link System#nanoTime()} values. Child JVMs report their own {@code nanoTime}, which is comparable
 * with ours: on Linux both read the system-wide {@code CLOCK_MONOTONIC} (and {@code faketime} is told to leave it
 * alone). Besides operations, a history keeps when faults took leases away and when holders were interrupted, to
 * measure the delay from one to the other.
 */
final class History {

    enum Kind { ACQUIRE, WRITE, RELEASE }

    enum Outcome { OK, FAIL, UNKNOWN, PENDING }

    /** One operation. {@code token} is the grant's token (ACQUIRE) or the token a write carried (WRITE). */
    static final class Op {
        final long id;
        final int worker;
        final Kind kind;
        final long invokedAt;
        volatile long completedAt;
        volatile Outcome outcome = Outcome.PENDING;
        volatile long token = -1;
        volatile String detail = "";

        Op(long id, int worker, Kind kind, long invokedAt) {
            this.id = id;
            this.worker = worker;
            this.kind = kind;
            this.invokedAt = invokedAt;
        }

        boolean ok() {
            return outcome == Outcome.OK;
        }

        String toJson() {
            return "{\"id\":" + id + ",\"worker\":" + worker + ",\"kind\":\"" + kind + "\",\"invokedAt\":" + invokedAt
                    + ",\"completedAt\":" + completedAt + ",\"outcome\":\"" + outcome + "\",\"token\":" + token
                    + ",\"detail\":\"" + detail.replace("\\", "\\\\").replace("\"", "'") + "\"}";
        }
    }

    /** A fault injected during the run; {@code lossAt} is when it took the holder's lease away (or could have). */
    record Fault(String what, long lossAt) {
    }

    private final AtomicLong ids = new AtomicLong();
    private final List<Op> ops = new ArrayList<>();
    private final Map<Long, Op> byId = new ConcurrentHashMap<>();
    private final List<Long> interrupts = new ArrayList<>();
    private final List<Integer> interruptedWorkers = new ArrayList<>();
    private final List<Fault> faults = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();
    private final Map<String, String> attributes = new java.util.TreeMap<>();

    Op invoke(int worker, Kind kind) {
        return invoke(ids.incrementAndGet(), worker, kind, System.nanoTime());
    }

    /** Records an invocation with an id chosen by the worker (unique across workers) and its own timestamp. */
    Op invoke(long id, int worker, Kind kind, long invokedAt) {
        Op op = new Op(id, worker, kind, invokedAt);
        if (byId.putIfAbsent(id, op) != null) {
            problem("op " + id + " (" + kind + " of worker " + worker + ") invoked twice: its events are garbled");
            return op;
        }
        synchronized (ops) {
            ops.add(op);
        }
        return op;
    }

    void complete(Op op, Outcome outcome, long token, String detail) {
        complete(op.id, outcome, token, System.nanoTime(), detail);
    }

    /**
     * Completes the operation {@code id} at {@code completedAt}. An unknown id is a problem of the run: its invocation
     * was lost, so the history is incomplete and a grant or write may be missing from it.
     */
    void complete(long id, Outcome outcome, long token, long completedAt, String detail) {
        Op op = byId.get(id);
        if (op == null) {
            problem("completion of op " + id + " (" + outcome + ", token " + token + ") whose invocation is missing");
            return;
        }
        op.token = token;
        op.detail = detail == null ? "" : detail;
        op.completedAt = completedAt;
        op.outcome = outcome;
    }

    /** A holder's work was interrupted (the engine declared its lease lost) at {@code at}. */
    void interrupted(int worker, long at) {
        synchronized (interrupts) {
            interrupts.add(at);
            interruptedWorkers.add(worker);
        }
    }

    /** How many times {@code worker} was interrupted. */
    long interruptsOf(int worker) {
        synchronized (interrupts) {
            return interruptedWorkers.stream().filter(w -> w == worker).count();
        }
    }

    /** When {@code worker} was interrupted, in the order recorded. */
    List<Long> interruptTimesOf(int worker) {
        synchronized (interrupts) {
            List<Long> times = new ArrayList<>();
            for (int i = 0; i < interrupts.size(); i++) {
                if (interruptedWorkers.get(i) == worker) {
                    times.add(interrupts.get(i));
                }
            }
            return times;
        }
    }

    /** A fault that takes the lease from its holder at {@code lossAt} (for a pause: when the holder resumes). */
    void fault(String what, long lossAt) {
        synchronized (faults) {
            faults.add(new Fault(what, lossAt));
        }
    }

    /**
     * Something that makes the history untrustworthy, found while recording it (a garbled event line, an event
     * stream that ended early, a worker that would not stop): the check fails on it, since a missing grant or write
     * could hide a duplicate token or a stale write.
     */
    void problem(String what) {
        synchronized (problems) {
            problems.add(what);
        }
    }

    /** Something a reader of the history needs to know about the run, such as the seed that replays it. */
    void attribute(String key, String value) {
        synchronized (attributes) {
            attributes.put(key, value);
        }
    }

    private String attributesJson() {
        StringBuilder sb = new StringBuilder();
        synchronized (attributes) {
            attributes.forEach((k, v) -> sb.append('"').append(k.replace("\"", "'")).append("\": \"")
                    .append(v.replace("\\", "\\\\").replace("\"", "'")).append("\",\n"));
        }
        return sb.toString();
    }

    List<String> problems() {
        synchronized (problems) {
            return List.copyOf(problems);
        }
    }

    List<Fault> faults() {
        synchronized (faults) {
            return List.copyOf(faults);
        }
    }

    List<Long> interrupts() {
        synchronized (interrupts) {
            return List.copyOf(interrupts);
        }
    }

    List<Op> ops() {
        synchronized (ops) {
            return List.copyOf(ops);
        }
    }

    /**
     * For each fault, the delay from the loss it caused to the first interrupt of a holder after it, within
     * {@code window}; faults that interrupted nobody (no one held a lease, or the holder kept it) are left out.
     */
    List<Long> lossToInterruptNanos(Duration window) {
        List<Long> sorted = new ArrayList<>(interrupts());
        sorted.sort(null);
        List<Long> delays = new ArrayList<>();
        for (Fault fault : faults()) {
            sorted.stream().filter(t -> t - fault.lossAt() >= 0 && t - fault.lossAt() <= window.toNanos()).findFirst()
                    .ifPresent(t -> delays.add(t - fault.lossAt()));
        }
        return delays;
    }

    String toJson() {
        StringBuilder sb = new StringBuilder("{").append(attributesJson()).append("\"faults\": [\n");
        List<Fault> fs = faults();
        for (int i = 0; i < fs.size(); i++) {
            sb.append("  {\"what\":\"").append(fs.get(i).what().replace("\"", "'")).append("\",\"lossAt\":")
                    .append(fs.get(i).lossAt()).append(i + 1 < fs.size() ? "},\n" : "}\n");
        }
        sb.append("],\n\"problems\": [");
        List<String> ps = problems();
        for (int i = 0; i < ps.size(); i++) {
            sb.append(i == 0 ? "\n  \"" : ",\n  \"").append(ps.get(i).replace("\\", "\\\\").replace("\"", "'"))
                    .append('"');
        }
        sb.append("],\n\"interrupts\": ").append(interrupts()).append(",\n\"ops\": [\n");
        List<Op> all = ops();
        for (int i = 0; i < all.size(); i++) {
            sb.append("  ").append(all.get(i).toJson()).append(i + 1 < all.size() ? ",\n" : "\n");
        }
        return sb.append("]}\n").toString();
    }
}
