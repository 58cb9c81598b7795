package dev.lease.zookeeper;

import org.apache.zookeeper.common.PathUtils;

import dev.lease.spi.LeaseNames;

/**
 * Where the znodes of a lease live: {@code {root}/{name}} (persistent; its version is the fencing token, unless the
 * token is the grant's zxid, and then it may be deleted while idle) and
 * {@code {root}/{name}/holder} (ephemeral, exists while the lease is granted), and once a grant with zxid tokens was
 * made on the name, the persistent marker {@code {root}/{name}/zxid-tokens}. Every name maps to exactly one path
 * segment under the root, so no name can reach outside it.
 */
final class LeasePaths {

    static final String HOLDER = "holder";
    static final String ZXID_MARKER = "zxid-tokens";
    /** The data of the znodes that carry none: a counter, a marker, a new root (what they say is in their stat). */
    static final byte[] NO_DATA = new byte[0];

    private final String root;

    LeasePaths(String root) {
        this.root = validateRoot(root);
    }

    String root() {
        return root;
    }

    String counter(String name) {
        return root + "/" + name;
    }

    String holder(String name) {
        return root + "/" + name + "/" + HOLDER;
    }

    /** The marker that says zxid tokens were issued for the name (see {@link ZooKeeperTokenSource}). */
    String zxidMarker(String name) {
        return root + "/" + name + "/" + ZXID_MARKER;
    }

    /** Refuses names ZooKeeper would refuse or read as more than one segment. */
    void validateName(String name) {
        if (name.isEmpty() || name.indexOf('/') >= 0 || name.equals(".") || name.equals("..")) {
            throw invalidName(name, "it must be exactly one path segment");
        }
        try {
            PathUtils.validatePath(holder(name));
        }
        catch (IllegalArgumentException ex) {
            throw invalidName(name, "ZooKeeper refuses the path " + LeaseNames.printable(counter(name)) + " ("
                    + LeaseNames.printable(ex.getMessage()) + "); ZooKeeper forbids control characters, U+007F-U+009F, U+D800-U+F8FF (including every "
                    + "character outside the Basic Multilingual Plane, such as emoji) and U+FFF0-U+FFFF");
        }
    }

    private static IllegalArgumentException invalidName(String name, String why) {
        return new IllegalArgumentException("Invalid lease name '" + LeaseNames.printable(name)
                + "' for the zookeeper backend: " + why + ". Use letters, digits and separators such as '-', '_', ':' or '.', e.g. 'invoice-42'.");
    }

    static String validateRoot(String root) {
        String fix = " Set lease.zookeeper.root to an absolute znode path without a trailing slash, such as /leases.";
        if (root == null || root.isBlank()) {
            throw new IllegalArgumentException("lease.zookeeper.root is empty." + fix);
        }
        if (!root.startsWith("/") || root.length() < 2 || root.endsWith("/")) {
            throw new IllegalArgumentException("lease.zookeeper.root '" + root + "' must be absolute, must not be '/' "
                    + "and must not end with '/'." + fix);
        }
        if (root.equals("/zookeeper") || root.startsWith("/zookeeper/")) {
            throw new IllegalArgumentException("lease.zookeeper.root '" + root + "' is inside /zookeeper, which "
                    + "ZooKeeper reserves for itself." + fix);
        }
        try {
            PathUtils.validatePath(root);
        }
        catch (IllegalArgumentException ex) {
            throw new IllegalArgumentException("lease.zookeeper.root '" + root + "' is not a valid znode path: "
                    + ex.getMessage() + "." + fix, ex);
        }
        return root;
    }
}
