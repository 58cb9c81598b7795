package dev.lease.fence.jpa;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The explicit opt-out from {@link FenceColumn} fencing, for a write that has no lease on purpose: an admin fix, a
 * data migration. Inside {@link #run} the current thread may write fenced entities without a token; each such write
 * leaves the fence column as it is and is logged (WARN) with the entity, its id and the reason given.
 *
 * <p>Hibernate writes when it flushes, so the flush must happen inside the callback: call {@code saveAndFlush}, or a
 * {@code @Transactional} method that commits before the callback returns. A fenced entity flushed after the
 * callback is refused as usual, never written unfenced by accident.
 *
 * <pre>{@code
 * UnfencedWrites.run("ticket 4711: restore the amount of invoice 42", () -> invoices.fixAmount(42, amount));
 * }</pre>
 *
 * <p>Inside a leased section with a token the writes stay fenced: the opt-out only lifts the refusal of writes that
 * have no token.
 */
public final class UnfencedWrites {

    private static final ThreadLocal<Deque<String>> REASONS = ThreadLocal.withInitial(ArrayDeque::new);

    private UnfencedWrites() {
    }

    /**
     * Runs {@code work} with unfenced writes allowed on this thread.
     *
     * @param reason why these writes need no lease, logged with each of them; not blank
     * @param work the writes, flushed before it returns
     * @throws IllegalArgumentException when the reason is blank
     */
    public static void run(String reason, Runnable work) {
        Objects.requireNonNull(work, "work");
        call(reason, () -> {
            work.run();
            return null;
        });
    }

    /**
     * Like {@link #run(String, Runnable)}, returning what {@code work} returns.
     *
     * @param reason why these writes need no lease, logged with each of them; not blank
     * @param work the writes, flushed before it returns
     * @param <T> the result type
     * @return the result of {@code work}
     * @throws IllegalArgumentException when the reason is blank
     */
    public static <T> T call(String reason, Supplier<T> work) {
        Objects.requireNonNull(work, "work");
        if (reason == null || reason.isBlank()) {
            throw new IllegalArgumentException("UnfencedWrites needs a reason, logged with every unfenced write: say "
                    + "why these writes need no lease, such as \"ticket 4711: restore invoice 42\"");
        }
        Deque<String> reasons = REASONS.get();
        reasons.push(reason);
        try {
            return work.get();
        }
        finally {
            reasons.pop();
            if (reasons.isEmpty()) {
                REASONS.remove();
            }
        }
    }

    /** The reason of the innermost opt-out on this thread, or null outside one. */
    static String currentReason() {
        Deque<String> reasons = REASONS.get();
        String reason = reasons.peek();
        if (reason == null) {
            REASONS.remove();
        }
        return reason;
    }
}
