package dev.lease.faults;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Everything the workers of a fault scenario did, as operations with an invocation and a completion on the
 * monotonic clock, in the style of a Jepsen history. Thread-safe; the checker reads it after the run.
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

    private final AtomicLong ids = new AtomicLong();
    private final List<Op> ops = new ArrayList<>();
    private final List<Long> lossToInterruptNanos = new ArrayList<>();

    Op invoke(int worker, Kind kind) {
        Op op = new Op(ids.incrementAndGet(), worker, kind, System.nanoTime());
        synchronized (ops) {
            ops.add(op);
        }
        return op;
    }

    void complete(Op op, Outcome outcome, long token, String detail) {
        op.token = token;
        op.detail = detail == null ? "" : detail;
        op.completedAt = System.nanoTime();
        op.outcome = outcome;
    }

    void lossToInterrupt(long nanos) {
        synchronized (lossToInterruptNanos) {
            lossToInterruptNanos.add(nanos);
        }
    }

    List<Op> ops() {
        synchronized (ops) {
            return List.copyOf(ops);
        }
    }

    List<Long> lossToInterruptNanos() {
        synchronized (lossToInterruptNanos) {
            return new ArrayList<>(lossToInterruptNanos);
        }
    }

    String toJson() {
        StringBuilder sb = new StringBuilder("[\n");
        List<Op> all = ops();
        for (int i = 0; i < all.size(); i++) {
            sb.append("  ").append(all.get(i).toJson()).append(i + 1 < all.size() ? ",\n" : "\n");
        }
        return sb.append("]\n").toString();
    }
}
