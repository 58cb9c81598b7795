package dev.lease.fence.http;

import dev.lease.fence.StaleTokenException;

/**
 * A fenced request refused before its handler ran: carries the status and problem body the server answers with.
 * Unchecked, so the handler's transaction rolls back.
 */
final class FencingRefusal extends RuntimeException {

    private final int status;
    private final transient StaleTokenException stale;
    private final String resource;

    private FencingRefusal(int status, String message, String resource, StaleTokenException stale) {
        super(message, stale);
        this.status = status;
        this.resource = resource;
        this.stale = stale;
    }

    /** 409: the fence refused the token. */
    static FencingRefusal stale(StaleTokenException stale) {
        return new FencingRefusal(409, stale.getMessage(), stale.resource(), stale);
    }

    /** 428: no token the server can compare; {@code reason} says what is wrong with the request. */
    static FencingRefusal tokenRequired(String resource, String reason) {
        return new FencingRefusal(428, reason, resource, null);
    }

    int status() {
        return status;
    }

    String resource() {
        return resource;
    }

    byte[] problem(String instance) {
        return stale != null ? FencingProblems.stale(stale, instance)
                : FencingProblems.tokenRequired(getMessage(), resource, instance);
    }
}
