package dev.lease.redis;

import java.util.OptionalLong;

import dev.lease.spi.Grant;

/**
 * A Redlock grant: the same key set to {@code owner} (this request's random attempt id) on a majority of the nodes.
 * Renewal and release go to every node, by owner, whichever nodes answered the grant.
 */
record RedlockGrant(String name, String key, String owner, long ttlMillis) implements Grant {

    /** None: a Redlock grant is a majority of independent keys, with nothing that orders one grant after another. */
    @Override
    public OptionalLong token() {
        return OptionalLong.empty();
    }
}
