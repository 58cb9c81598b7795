package dev.lease.zookeeper;

import java.util.OptionalLong;

import dev.lease.spi.Grant;

/**
 * One grant: {@code value} is its token (the counter's version or the grant's zxid, see {@link TokenScheme}),
 * {@code version} the counter's version after the grant (which a release checks), {@code sessionId} the session that
 * committed it (which owns its holder) and {@code zxid} the zxid of the granting {@code multi}, which is also its
 * holder's creation zxid.
 */
record ZkGrant(String name, long value, int version, long sessionId, long zxid) implements Grant {

    @Override
    public OptionalLong token() {
        return OptionalLong.of(value);
    }
}
