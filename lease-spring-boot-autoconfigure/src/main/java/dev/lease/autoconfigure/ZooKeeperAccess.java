package dev.lease.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.jspecify.annotations.Nullable;

import dev.lease.LeaseConfigurationException;

/**
 * Who may change the lease znodes. Curator's default ACL is {@code world:anyone} with every permission: any client of
 * the ensemble could delete a holder (and take the name), create a persistent {@code holder} (and block the name for
 * ever) or delete an idle counter (and reset its tokens). With {@code lease.zookeeper.authorization.*} the client
 * authenticates and creates every znode creator-only ({@link ZooDefs.Ids#CREATOR_ALL_ACL}); without it, startup says
 * so once.
 */
final class ZooKeeperAccess {

    private static final Log log = LogFactory.getLog(ZooKeeperAccess.class);

    private static final String SASL = "sasl";

    /** Every znode the client creates is readable and writable by the identities that created it, and nobody else. */
    static final ACLProvider CREATOR_ONLY = new ACLProvider() {
        @Override
        public List<ACL> getDefaultAcl() {
            return ZooDefs.Ids.CREATOR_ALL_ACL;
        }

        @Override
        public List<ACL> getAclForPath(String path) {
            return ZooDefs.Ids.CREATOR_ALL_ACL;
        }
    };

    private ZooKeeperAccess() {
    }

    /**
     * Authenticates the builder's client and makes its znodes creator-only, when authorization is configured.
     *
     * @return whether it was
     */
    static boolean apply(CuratorFrameworkFactory.Builder builder, ZooKeeperLeaseProperties.Authorization settings) {
        String scheme = settings.getScheme();
        String credentials = settings.getCredentials();
        if (scheme == null || scheme.isBlank()) {
            if (credentials != null) {
                throw new LeaseConfigurationException("lease.zookeeper.authorization.credentials is set but "
                        + "lease.zookeeper.authorization.scheme is not.",
                        "set lease.zookeeper.authorization.scheme (such as 'digest' for credentials 'user:password'), "
                                + "or remove the credentials.");
            }
            return false;
        }
        if (!SASL.equalsIgnoreCase(scheme)) {
            if (credentials == null || credentials.isEmpty()) {
                throw new LeaseConfigurationException("lease.zookeeper.authorization.scheme is '" + scheme
                        + "' but lease.zookeeper.authorization.credentials is not set.",
                        "set lease.zookeeper.authorization.credentials (for digest: 'user:password').");
            }
            // With SASL the identity comes from the JAAS login of the ZooKeeper client, not from addAuth.
            builder.authorization(scheme, credentials.getBytes(StandardCharsets.UTF_8));
        }
        builder.aclProvider(CREATOR_ONLY);
        return true;
    }

    /**
     * Warns once when the client creates world-writable znodes, and refuses a root that a client authenticated for
     * creator-only znodes would leave world-writable: its children (the counters) could be deleted or pre-created by
     * anyone.
     *
     * @param ownClient whether the starter built the client (else it is the application's {@code CuratorFramework}
     *        bean, and the advice differs)
     */
    static void check(CuratorFramework client, String root, boolean ownClient) {
        List<ACL> created;
        List<ACL> rootAcl;
        try {
            try {
                // As the backend would on its first grant, with this client's ACL.
                client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(root, new byte[0]);
            }
            catch (KeeperException.NodeExistsException exists) {
                // Created earlier, perhaps by someone else: its ACL is checked below.
            }
            created = aclOfNewZnodes(client, root);
            rootAcl = client.getACL().forPath(root);
        }
        catch (Exception ex) {
            throw new LeaseConfigurationException("Could not check who may change the ZooKeeper lease znodes under "
                    + root + ": " + ex + ".", "check that the ensemble is reachable and that this client's identity "
                            + "may create, read and delete znodes under " + root + ".");
        }
        if (worldWritable(created)) {
            log.warn("ZooKeeper lease znodes under " + root + " are created world-writable (ACL world:anyone): any "
                    + "client of the ensemble can delete holders and counters, taking names or resetting their "
                    + "fencing tokens. " + (ownClient
                            ? "Set lease.zookeeper.authorization.scheme and lease.zookeeper.authorization.credentials "
                                    + "(for example digest and leases:secret) to make them creator-only."
                            : "Give the application's CuratorFramework bean authorization(...) and an ACLProvider "
                                    + "answering ZooDefs.Ids.CREATOR_ALL_ACL, or let the starter build the client "
                                    + "with lease.zookeeper.authorization.scheme and .credentials."));
            return;
        }
        if (worldWritable(rootAcl)) {
            throw new LeaseConfigurationException("The ZooKeeper lease root " + root + " is world-writable (its ACL "
                    + "gives world:anyone more than read), although the client creates lease znodes creator-only: any "
                    + "client of the ensemble could delete idle counters (resetting their tokens) or create names "
                    + "before this application does.",
                    "restrict it to the lease identity, e.g. in zkCli: addauth digest <user:password>, then "
                            + "setAcl -R " + root + " auth::cdrwa; or delete " + root + " (with no lease held) so "
                            + "that the starter creates it creator-only.");
        }
    }

    /**
     * The ACL this client gives the znodes it creates, read off a probe it creates and deletes at once (Curator does
     * not expose its ACL provider). The probe's name starts with a space, which no lease name may.
     */
    private static List<ACL> aclOfNewZnodes(CuratorFramework client, String root) throws Exception {
        String probe = client.create().withMode(CreateMode.EPHEMERAL_SEQUENTIAL).forPath(root + "/ acl-probe-");
        try {
            return client.getACL().forPath(probe);
        }
        finally {
            client.delete().quietly().forPath(probe);
        }
    }

    private static boolean worldWritable(@Nullable List<ACL> acl) {
        if (acl == null) {
            return true;
        }
        return acl.stream().anyMatch(entry -> "world".equals(entry.getId().getScheme())
                && "anyone".equals(entry.getId().getId()) && (entry.getPerms() & ~ZooDefs.Perms.READ) != 0);
    }
}
