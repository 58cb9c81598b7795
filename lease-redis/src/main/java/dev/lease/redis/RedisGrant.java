package dev.lease.redis;

import java.util.OptionalLong;

import dev.lease.spi.Grant;

/**
 * A Redis grant: the key was set to {@code owner}, a random id minted for this grant alone, so that renew and
 * release can tell our grant from a successor's.
 */
record RedisGrant(String name, String key, String owner, long ttlMillis) implements Grant {

    @Override
    public OptionalLong token() {
        return OptionalLong.empty();
    }
}
