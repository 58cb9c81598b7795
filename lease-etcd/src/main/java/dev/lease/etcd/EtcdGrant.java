package dev.lease.etcd;

import java.util.OptionalLong;

import io.etcd.jetcd.ByteSequence;

import dev.lease.spi.Grant;

/**
 * An etcd grant: the key {@code key} was created holding {@code owner} (the request's attempt id) and bound to the
 * etcd lease {@code leaseId}; {@code createRevision} is the key's create_revision, which is the fencing token. A key
 * deleted and created again gets a new, higher create_revision, so a renewal comparing it can never mistake a
 * successor's key for ours.
 */
record EtcdGrant(String name, ByteSequence key, String owner, long leaseId, long createRevision, long ttlSeconds)
        implements Grant {

    @Override
    public OptionalLong token() {
        return OptionalLong.of(createRevision);
    }
}
