package dev.lease.zookeeper;

/**
 * Where the fencing token of a ZooKeeper grant comes from ({@code lease.zookeeper.token}).
 *
 * <p>Switching from {@link #VERSION} to {@link #ZXID} keeps tokens rising: every version bump of a znode is a
 * transaction of its own, with a zxid of its own, so the zxid of a grant exceeds the version of every znode (and in an
 * ensemble the leader epoch in its upper 32 bits makes it far larger). The opposite switch sends tokens back and must
 * not be made on names whose tokens guard resources.
 *
 * <p>All instances using a name must use the same source: a version token granted next to zxid tokens would be far
 * below them, so fenced resources would refuse its holder and accept late writes of the zxid holder before it. A zxid
 * grant therefore marks its name ({@code {root}/{name}/zxid-tokens}), and a version grant on a marked name is refused
 * with an {@link IllegalStateException}; so is a version grant that would re-create a name under a root where idle
 * names are deleted. Switch from version to zxid with all instances stopped, and never back.
 */
public enum ZooKeeperTokenSource {

    /**
     * The version of the persistent znode {@code {root}/{name}}, bumped by every grant: small, per name, strictly
     * increasing for as long as that znode exists. A re-created znode starts again at version 0, so the library never
     * deletes it, and idle names stay in the store.
     */
    VERSION,

    /**
     * The zxid of the write that granted the lease: ensemble-wide and strictly increasing, also across deletion and
     * re-creation of a name's znode, which makes it safe to delete idle names' znodes
     * ({@code lease.zookeeper.delete-idle-after}).
     */
    ZXID
}
