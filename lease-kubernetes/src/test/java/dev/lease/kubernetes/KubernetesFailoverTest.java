package dev.lease.kubernetes;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.KubernetesClient;

import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.CallOutcome;
import dev.lease.testing.TcpProxy;

/**
 * A holder cut off from the API server (its connection frozen behind a proxy, so its renewals hang rather than fail):
 * it is interrupted, and the other instance takes over only after the lease duration, with a higher token, by which
 * time the holder's own validity had already ended.
 */
class KubernetesFailoverTest {

    private MockApiServer server;
    private TcpProxy link;
    private KubernetesClient cutOffClient;
    private KubernetesClient otherClient;
    private KubernetesLeaseBackend cutOff;
    private KubernetesLeaseBackend other;
    private LeaseEngine engine;

    @BeforeEach
    void start() throws Exception {
        server = new MockApiServer().gap(2);
        link = new TcpProxy(server.port());
        // Requests outlive the ttl: the holder's renewals hang, so its lease ends by its own local validity.
        cutOffClient = MockApiServer.client("http://127.0.0.1:" + link.port() + "/", seconds(30));
        otherClient = server.client(seconds(10));
        cutOff = new KubernetesLeaseBackend(cutOffClient, "test", "lease-", "cut-off", false);
        other = new KubernetesLeaseBackend(otherClient, "test", "lease-", "other", false);
        engine = engineOn(cutOff);
        // Each client's first requests load and link most of fabric8 (models, serialization, HTTP): on a loaded
        // machine that took longer than the scenario's timings allow. Paid here, before any of them starts.
        warmUp(cutOff);
        warmUp(other);
    }

    private static void warmUp(KubernetesLeaseBackend backend) throws Exception {
        KubernetesGrant grant = backend.tryAcquire(new GrantRequest("warm-up-" + backend.holderIdentity(),
                seconds(30), reason -> { })).orElseThrow();
        assertThat(backend.renew(grant)).as("warm-up renewal").isTrue();
        backend.release(grant);
    }

    @AfterEach
    void stop() {
        engine.close();
        link.unfreeze();
        cutOffClient.close();
        otherClient.close();
        link.close();
        server.close();
    }

    @Test
    void aCutOffHolderIsInterruptedAndTheOtherTakesOverAfterTheLeaseDurationWithAHigherToken() throws Exception {
        // 1.5 s is written as a 2 s lease duration: rounding down would let the other instance in while the holder's
        // 1.5 s of local validity still run.
        Duration ttl = Duration.ofMillis(1500);
        String name = "cut-off";
        AtomicReference<Lease> held = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            // A free name: waiting only lets a slow request to the API server be tried again.
            Future<Void> call = pool.submit(() -> engine.execute(
                    LeaseSpec.of(name, LeaseKind.CORRECTNESS).withTtl(ttl).withWaitFor(seconds(20)),
                    lease -> {
                        held.set(lease);
                        started.countDown();
                        try {
                            Thread.sleep(seconds(60).toMillis());
                        }
                        catch (InterruptedException ex) {
                            interrupted.set(true);
                            throw ex;
                        }
                        return null;
                    }));
            assertThat(started.await(seconds(30).toMillis(), TimeUnit.MILLISECONDS))
                    .as("holder started; its call: %s", CallOutcome.of(call)).isTrue();
            long token = held.get().token().value();
            // The other instance reads the Lease often, before and while the holder is cut off, so that it sees
            // each of the holder's renewals at once and starts counting the lease duration right after the last one.
            AtomicReference<KubernetesGrant> successor = new AtomicReference<>();
            AtomicBoolean holderValidAtTakeover = new AtomicBoolean(true);
            AtomicReference<Throwable> failed = new AtomicReference<>();
            CountDownLatch watching = new CountDownLatch(20);
            Thread competitor = new Thread(() -> {
                try {
                    while (successor.get() == null) {
                        other.tryAcquire(new GrantRequest(name, seconds(30), reason -> { })).ifPresent(grant -> {
                            holderValidAtTakeover.set(held.get().isValid());
                            successor.set(grant);
                        });
                        watching.countDown();
                        Thread.sleep(5);
                    }
                }
                catch (Throwable ex) {
                    failed.set(ex);
                }
                finally {
                    while (watching.getCount() > 0) {
                        watching.countDown();
                    }
                }
            }, "competitor");
            competitor.start();
            assertThat(watching.await(seconds(30).toMillis(), TimeUnit.MILLISECONDS)).as("competitor watching")
                    .isTrue();
            // Before the link is frozen the holder renews freely: a takeover now would be a lease lost to load.
            assertThat(failed.get()).as("competitor failed before the link was frozen").isNull();
            assertThat(successor.get()).as("a takeover before the link was frozen; the holder's call: %s",
                    CallOutcome.of(call)).isNull();
            link.freeze();
            competitor.join(seconds(20).toMillis());
            assertThat(failed.get()).as("competitor failed").isNull();
            assertThat(successor.get()).as("successor").isNotNull();
            assertThat(holderValidAtTakeover).as("the holder's lease still valid when the other took over").isFalse();
            assertThat(successor.get().token().getAsLong()).as("successor's token").isGreaterThan(token);
            assertThatThrownBy(() -> call.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(LeaseLostException.class)
                    .hasMessageContaining(name);
            assertThat(interrupted).as("holder interrupted").isTrue();
            link.unfreeze();
            await().atMost(seconds(20)).until(() -> cutOffClient.leases().inNamespace("test").withName("lease-" + name)
                    .get() != null);
            assertThat(other.renew(successor.get())).as("the holder's late release left the successor's lease")
                    .isTrue();
            other.release(successor.get());
        }
        finally {
            pool.shutdownNow();
        }
    }

    private static LeaseEngine engineOn(LeaseBackend<?> backend) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        routes.put(LeaseKind.EFFICIENCY, backend);
        return new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
    }
}
