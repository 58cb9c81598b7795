package dev.lease.kubernetes;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;

/**
 * Fencing tokens from the {@code resourceVersion} of a grant's write, with a last check that the server keeps
 * KEP-5504's promise: a token must be a positive integer greater than the highest granted here before the request
 * was sent. One number, not one per name (names may be per entity and unbounded), and a stronger check:
 * resourceVersions are cluster-wide, so a grant's write must get a greater one than every write that completed before
 * it was sent, whatever the name. Each request compares with the value read before it is sent ({@link #floor()}),
 * never with grants completing meanwhile (those may rightly carry greater versions), so a server keeping its promise
 * is never refused.
 */
final class ResourceVersionTokens {

    private final AtomicLong highestToken = new AtomicLong();
    private final Supplier<String> server;

    /** @param server describes the API server and its version, for the message of a refused token */
    ResourceVersionTokens(Supplier<String> server) {
        this.server = server;
    }

    /** The highest token granted here so far: read before a grant request is sent. */
    long floor() {
        return highestToken.get();
    }

    /**
     * The token of the write that just granted {@code name}: its resourceVersion as a number.
     *
     * @param giveUp frees the object when the token is refused
     * @throws IllegalStateException when it is not a positive integer greater than {@code floor}
     */
    long of(String name, Lease written, long floor, Runnable giveUp) {
        String version = written.getMetadata().getResourceVersion();
        long value;
        try {
            value = Long.parseLong(version);
        }
        catch (NumberFormatException | NullPointerException ex) {
            value = -1;
        }
        // Strictly greater: a token equal to an earlier one would let two holders pass the same fence.
        if (value <= 0 || value <= floor) {
            String why = value <= 0 ? "its resourceVersion '" + version + "' is not a positive integer"
                    : "its resourceVersion " + value + " is not greater than the token " + floor
                            + " granted earlier here";
            giveUp.run();
            throw new IllegalStateException("Lease '" + name + "' was granted, but " + why + ", so it cannot serve as "
                    + "a fencing token (" + server.get() + "; comparable resourceVersions need "
                    + ServerVersion.COMPARABLE_RESOURCE_VERSIONS.text() + "+). The grant was given up.");
        }
        highestToken.accumulateAndGet(value, Math::max);
        return value;
    }
}
