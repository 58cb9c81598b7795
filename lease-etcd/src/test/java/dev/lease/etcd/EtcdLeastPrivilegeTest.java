package dev.lease.etcd;

import static dev.lease.etcd.EtcdTesting.bytes;
import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;

import io.etcd.jetcd.Auth;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.auth.Permission;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import dev.lease.spi.GrantRequest;
import dev.lease.testing.EtcdServer;

/**
 * The least-privilege recipe of docs/etcd.md on a real etcd with authentication on: a role with read-write on the key
 * prefix alone serves every lease operation, and reaches nothing outside it; another tenant's user cannot touch the
 * lease keys. The same steps as the etcdctl commands there, through jetcd's Auth API (etcdctl's 'auth enable' adds the
 * root role by itself).
 */
class EtcdLeastPrivilegeTest {

    private static EtcdServer etcd;
    private static Client app;
    private static Client otherTenant;

    @BeforeAll
    static void startEtcdWithAuthentication() throws Exception {
        etcd = EtcdServer.start(1);
        try (Client admin = EtcdTesting.client(etcd.endpoints())) {
            Auth auth = admin.getAuthClient();
            auth.userAdd(bytes("root"), bytes("root-secret")).get(10, TimeUnit.SECONDS);
            auth.roleAdd(bytes("root")).get(10, TimeUnit.SECONDS);
            auth.userGrantRole(bytes("root"), bytes("root")).get(10, TimeUnit.SECONDS);
            auth.roleAdd(bytes("leases")).get(10, TimeUnit.SECONDS);
            auth.roleGrantPermission(bytes("leases"), bytes("/leases/"), prefixEnd("/leases/"),
                    Permission.Type.READWRITE).get(10, TimeUnit.SECONDS);
            auth.userAdd(bytes("leases-app"), bytes("app-secret")).get(10, TimeUnit.SECONDS);
            auth.userGrantRole(bytes("leases-app"), bytes("leases")).get(10, TimeUnit.SECONDS);
            auth.roleAdd(bytes("other")).get(10, TimeUnit.SECONDS);
            auth.roleGrantPermission(bytes("other"), bytes("/other/"), prefixEnd("/other/"),
                    Permission.Type.READWRITE).get(10, TimeUnit.SECONDS);
            auth.userAdd(bytes("other-app"), bytes("other-secret")).get(10, TimeUnit.SECONDS);
            auth.userGrantRole(bytes("other-app"), bytes("other")).get(10, TimeUnit.SECONDS);
            auth.authEnable().get(10, TimeUnit.SECONDS);
        }
        app = client("leases-app", "app-secret");
        otherTenant = client("other-app", "other-secret");
    }

    @AfterAll
    static void stopEtcd() {
        if (etcd != null) {
            app.close();
            otherTenant.close();
            etcd.close();
        }
    }

    @Test
    void theRoleOnThePrefixServesEveryLeaseOperation() throws Exception {
        EtcdLeaseBackend backend = new EtcdLeaseBackend(app, "/leases/", seconds(5));
        try {
            EtcdGrant grant = backend.tryAcquire(new GrantRequest("rbac", seconds(30), reason -> { })).orElseThrow();
            assertThat(backend.tryAcquire(new GrantRequest("rbac", seconds(30), reason -> { }))).as("busy").isEmpty();
            assertThat(backend.renew(grant)).isTrue();
            assertThat(backend.checkHealth(seconds(5))).containsEntry("leader", "known");
            backend.awaitRelease("free-name", seconds(1));
            backend.release(grant);
            EtcdGrant next = backend.tryAcquire(new GrantRequest("rbac", seconds(30), reason -> { })).orElseThrow();
            assertThat(next.createRevision()).isGreaterThan(grant.createRevision());
            GrantRequest abandoned = new GrantRequest("rbac-abandoned", seconds(30), reason -> { });
            backend.tryAcquire(abandoned).orElseThrow();
            backend.abandon(abandoned);
            backend.release(next);
        }
        finally {
            backend.close();
        }
    }

    @Test
    void nothingOutsideThePrefixIsReachable() {
        EtcdLeaseBackend elsewhere = new EtcdLeaseBackend(app, "/other/", seconds(5));
        assertThatThrownBy(() -> elsewhere.tryAcquire(new GrantRequest("x", seconds(30), reason -> { })))
                .hasMessageContaining("permission denied");
        elsewhere.close();
    }

    @Test
    void anotherTenantCannotTouchTheLeaseKeys() throws Exception {
        EtcdLeaseBackend backend = new EtcdLeaseBackend(app, "/leases/", seconds(5));
        EtcdGrant grant = backend.tryAcquire(new GrantRequest("tenant", seconds(30), reason -> { })).orElseThrow();
        try {
            assertThatThrownBy(() -> otherTenant.getKVClient().delete(bytes("/leases/tenant")).get(10, TimeUnit.SECONDS))
                    .hasMessageContaining("permission denied");
            assertThatThrownBy(() -> otherTenant.getLeaseClient().revoke(grant.leaseId()).get(10, TimeUnit.SECONDS))
                    .hasMessageContaining("permission denied");
            assertThat(backend.renew(grant)).as("still held").isTrue();
        }
        finally {
            backend.release(grant);
            backend.close();
        }
    }

    private static Client client(String user, String password) {
        return Client.builder().endpoints(etcd.endpoints().split(",")).user(bytes(user)).password(bytes(password))
                .connectTimeout(seconds(2)).retryMaxDuration(seconds(5)).build();
    }

    /** The end of the key range of a prefix: the prefix with its last byte one higher, as etcdctl --prefix computes. */
    private static ByteSequence prefixEnd(String prefix) {
        byte[] end = prefix.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        end[end.length - 1]++;
        return ByteSequence.from(end);
    }
}
