package dev.lease.fence.http;

import dev.lease.fence.StaleTokenException;

/**
 * A fenced request refused before its handler ran: carries the status and problem body the server answers with.
 * Unchecked, so the handler's transaction rolls back.
 */
final class FencingRefusal extends RuntimeException {

    /** Why a request got 428: bounded, so it can tag a meter. */
    enum Missing {
        /** No {@code Fencing-Token} header at all: a client outside a leased section, or without the customizer. */
        HEADER("missing"),
        /** A header that is not a token: not an RFC 9651 Integer with a valid {@code lease} parameter. */
        MALFORMED("malformed"),
        /** A token of another lease than the one the resource is written under: not comparable. */
        OTHER_LEASE("other-lease");

        final String tag;

        Missing(String tag) {
            this.tag = tag;
        }
    }

    private final int status;
    private final Missing missing;
    private final transient StaleTokenException stale;
    private final String resource;

    private FencingRefusal(int status, String message, String resource, StaleTokenException stale, Missing missing) {
        super(message, stale);
        this.status = status;
        this.missing = missing;
        this.resource = resource;
        this.stale = stale;
    }

    /** 409: the fence refused the token. */
    static FencingRefusal stale(StaleTokenException stale) {
        return new FencingRefusal(409, stale.getMessage(), stale.resource(), stale, null);
    }

    /** 428: no token the server can compare; {@code reason} says what is wrong with the request. */
    static FencingRefusal tokenRequired(String resource, Missing missing, String reason) {
        return new FencingRefusal(428, reason, resource, null, missing);
    }

    /** What was missing, for a 428; null for a 409 (the fence that refused the token counts those). */
    Missing missing() {
        return missing;
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
