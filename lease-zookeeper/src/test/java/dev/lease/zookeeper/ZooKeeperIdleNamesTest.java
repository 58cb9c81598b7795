package dev.lease.zookeeper;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import dev.lease.spi.GrantRequest;

/** zxid tokens and the deletion of idle names' znodes, on a real server. */
class ZooKeeperIdleNamesTest {

    private static final Log log = LogFactory.getLog(ZooKeeperIdleNamesTest.class);
    private static final String ROOT = "/idle-leases";
    private static final Duration SESSION_TIMEOUT = seconds(30);
    /** Long enough that the backends' own sweeps stay out of the way; the tests sweep themselves. */
    private static final Duration NEVER_BY_ITSELF = Duration.ofHours(1);

    private TestingServer server;
    private CuratorFramework firstClient;
    private CuratorFramework secondClient;
    private final List<ZooKeeperLeaseBackend> backends = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        server = ZooKeeperTesting.startServer();
        firstClient = ZooKeeperTesting.client(server.getConnectString(), SESSION_TIMEOUT);
        secondClient = ZooKeeperTesting.client(server.getConnectString(), SESSION_TIMEOUT);
    }

    @AfterEach
    void stop() throws Exception {
        backends.forEach(ZooKeeperLeaseBackend::close);
        firstClient.close();
        secondClient.close();
        server.close();
    }

    @Test
    void deletingIdleNamesIsRefusedWithVersionTokens() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new ZooKeeperLeaseBackend(firstClient, ROOT, SESSION_TIMEOUT,
                        ZooKeeperTokenSource.VERSION, Duration.ofHours(1)))
                .withMessageContaining("lease.zookeeper.delete-idle-after")
                .withMessageContaining("lease.zookeeper.token=zxid");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> new ZooKeeperLeaseBackend(firstClient, ROOT, SESSION_TIMEOUT,
                        ZooKeeperTokenSource.ZXID, Duration.ZERO))
                .withMessageContaining("lease.zookeeper.delete-idle-after must be positive");
    }

    @Test
    void zxidTokensKeepRisingAcrossDeletionAndRecreationOfTheName() throws Exception {
        ZooKeeperLeaseBackend backend = backend(firstClient, ZooKeeperTokenSource.ZXID, Duration.ofMillis(1));
        String name = "recreated";
        long last = 0;
        for (int round = 0; round < 4; round++) {
            ZkGrant grant = grant(backend, name).orElseThrow();
            assertThat(grant.value()).as("token of round " + round).isGreaterThan(last);
            assertThat(grant.version()).as("the znode was re-created").isEqualTo(1);
            last = grant.value();
            backend.release(grant);
            await().atMost(seconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> {
                backend.deleteIdleNamesNow();
                return firstClient.checkExists().forPath(ROOT + "/" + name) == null;
            });
        }
    }

    /** Why idle names are kept with version tokens: the re-created znode starts again at version 0. */
    @Test
    void versionTokensWouldGoBackIfTheNameWereDeleted() throws Exception {
        ZooKeeperLeaseBackend backend = backend(firstClient, ZooKeeperTokenSource.VERSION, null);
        String name = "kept";
        ZkGrant first = grant(backend, name).orElseThrow();
        backend.release(first);
        ZkGrant second = grant(backend, name).orElseThrow();
        backend.release(second);
        assertThat(second.value()).isGreaterThan(first.value());
        assertThat(backend.deleteIdleNamesNow()).as("version tokens keep idle names").isZero();
        assertThat(firstClient.checkExists().forPath(ROOT + "/" + name)).isNotNull();

        firstClient.delete().forPath(ROOT + "/" + name);
        ZkGrant afterDeletion = grant(backend, name).orElseThrow();
        backend.release(afterDeletion);
        assertThat(afterDeletion.value()).as("the token went back").isLessThanOrEqualTo(first.value());
    }

    @Test
    void switchingFromVersionToZxidTokensKeepsThemRising() throws Exception {
        ZooKeeperLeaseBackend versions = backend(firstClient, ZooKeeperTokenSource.VERSION, null);
        long last = 0;
        for (int i = 0; i < 5; i++) {
            ZkGrant grant = grant(versions, "switched").orElseThrow();
            versions.release(grant);
            last = grant.value();
        }
        ZooKeeperLeaseBackend zxids = backend(secondClient, ZooKeeperTokenSource.ZXID, null);
        ZkGrant grant = grant(zxids, "switched").orElseThrow();
        zxids.release(grant);
        assertThat(grant.value()).isGreaterThan(last);
    }

    @Test
    void aHeldNameIsNeverDeletedHoweverLongItIsIdle() throws Exception {
        ZooKeeperLeaseBackend backend = backend(firstClient, ZooKeeperTokenSource.ZXID, Duration.ofMillis(1));
        ZkGrant held = grant(backend, "held").orElseThrow();
        grant(backend, "free").ifPresent(g -> {
            try {
                backend.release(g);
            }
            catch (Exception ex) {
                throw new IllegalStateException(ex);
            }
        });
        await().atMost(seconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> {
            backend.deleteIdleNamesNow();
            return firstClient.checkExists().forPath(ROOT + "/free") == null;
        });
        for (int i = 0; i < 20; i++) {
            backend.deleteIdleNamesNow();
        }
        assertThat(firstClient.checkExists().forPath(ROOT + "/held/holder")).as("holder").isNotNull();
        assertThat(backend.renew(held)).as("held lease renews").isTrue();
        backend.release(held);
    }

    /**
     * During a rolling switch a version instance must not grant a name zxid grants used: its token (the version) is
     * far below the zxid tokens the resources have seen.
     */
    @Test
    void versionTokensAreRefusedOnANameGrantedWithZxidTokens() throws Exception {
        ZooKeeperLeaseBackend versions = backend(firstClient, ZooKeeperTokenSource.VERSION, null);
        ZooKeeperLeaseBackend zxids = backend(secondClient, ZooKeeperTokenSource.ZXID, null);
        for (String name : List.of("mixed-new", "mixed-old")) {
            if (name.equals("mixed-old")) {
                versions.release(grant(versions, name).orElseThrow()); // a name from before the switch
            }
            ZkGrant zxid = grant(zxids, name).orElseThrow();
            zxids.release(zxid);

            assertThatIllegalStateException().as(name).isThrownBy(() -> grant(versions, name))
                    .withMessageContaining("Lease '" + name + "'")
                    .withMessageContaining("lease.zookeeper.token=version")
                    .withMessageContaining("lease.zookeeper.token=zxid")
                    .withMessageContaining("never switch back");
            assertThat(firstClient.checkExists().forPath(ROOT + "/" + name + "/holder")).as("refused grant released")
                    .isNull();
            assertThat(versions.liveGrants()).isZero();
            ZkGrant again = grant(zxids, name).orElseThrow();
            assertThat(again.value()).as("zxid tokens go on rising").isGreaterThan(zxid.value());
            zxids.release(again);
        }
    }

    @Test
    void idleNamesWithoutTheZxidMarkAreNotDeleted() throws Exception {
        ZooKeeperLeaseBackend versions = backend(firstClient, ZooKeeperTokenSource.VERSION, null);
        ZooKeeperLeaseBackend sweeping = backend(secondClient, ZooKeeperTokenSource.ZXID, Duration.ofMillis(1));
        versions.release(grant(versions, "unmarked").orElseThrow());
        sweeping.release(grant(sweeping, "marked").orElseThrow());
        await().atMost(seconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> {
            sweeping.deleteIdleNamesNow();
            return secondClient.checkExists().forPath(ROOT + "/marked") == null;
        });
        for (int i = 0; i < 20; i++) {
            sweeping.deleteIdleNamesNow();
        }
        assertThat(firstClient.checkExists().forPath(ROOT + "/unmarked")).as("unmarked name kept").isNotNull();
        // The version instance goes on with its existing name, but must not re-create one the sweeper may have
        // deleted after zxid grants.
        ZkGrant kept = grant(versions, "unmarked").orElseThrow();
        assertThat(kept.value()).isEqualTo(2);
        versions.release(kept);
        assertThatIllegalStateException().isThrownBy(() -> grant(versions, "marked"))
                .withMessageContaining("Lease 'marked'")
                .withMessageContaining("lease.zookeeper.token=zxid");
        assertThat(firstClient.checkExists().forPath(ROOT + "/marked")).as("not re-created").isNull();
    }

    /** A root too large to list is not listed: only the names this instance used are swept, a few reads at a time. */
    @Test
    void aLargeRootIsNotListedAndOnlyTheNamesUsedHereAreSwept() throws Exception {
        ZooKeeperLeaseBackend zxids = backend(firstClient, ZooKeeperTokenSource.ZXID, null);
        for (int i = 0; i < 6; i++) {
            zxids.release(grant(zxids, "many-" + i).orElseThrow());
        }
        LeasePaths paths = new LeasePaths(ROOT);
        IdleNameSweeper small = new IdleNameSweeper(secondClient, paths, Duration.ofMillis(1), System::nanoTime, 5, 1);
        small.forget("many-0");
        small.forget("many-1");
        await().atMost(seconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> {
            small.sweep();
            return secondClient.checkExists().forPath(ROOT + "/many-0") == null
                    && secondClient.checkExists().forPath(ROOT + "/many-1") == null;
        });
        for (int i = 0; i < 10; i++) {
            small.sweep();
        }
        for (int i = 2; i < 6; i++) {
            assertThat(secondClient.checkExists().forPath(ROOT + "/many-" + i)).as("many-" + i).isNotNull();
        }
        // Under the bound the root is listed again, and every idle name goes, one read in flight at a time.
        IdleNameSweeper listing = new IdleNameSweeper(secondClient, paths, Duration.ofMillis(1), System::nanoTime, 50, 1);
        await().atMost(seconds(10)).pollInterval(Duration.ofMillis(5)).until(() -> {
            listing.sweep();
            return secondClient.getChildren().forPath(ROOT).isEmpty();
        });
    }

    /** Once closed, the backend no longer hears of a suspended connection: its grants must not look held. */
    @Test
    void closingTheBackendReportsItsGrantsLost() throws Exception {
        ZooKeeperLeaseBackend backend = new ZooKeeperLeaseBackend(firstClient, ROOT, SESSION_TIMEOUT);
        List<String> reasons = new CopyOnWriteArrayList<>();
        ZkGrant watched = backend.tryAcquire(new GrantRequest("closed-a", seconds(10),
                reasons::add)).orElseThrow();
        ZkGrant fresh = backend.tryAcquire(new GrantRequest("closed-b", seconds(10),
                reasons::add)).orElseThrow();
        assertThat(backend.renew(watched)).isTrue();
        backend.close();
        // Closing removes the watch on the first holder, an event of its own: once the event thread has delivered it
        // (a sync's answer comes after), the grant must still have been lost for the closing, and only once.
        CompletableFuture<Void> drained = new CompletableFuture<>();
        firstClient.sync().inBackground((c, event) -> drained.complete(null)).forPath(ROOT);
        drained.get(10, TimeUnit.SECONDS);
        assertThat(reasons).hasSize(2).allSatisfy(reason -> assertThat(reason).contains("closed"));
        assertThat(backend.renew(watched)).isFalse();
        assertThat(backend.renew(fresh)).isFalse();
        backend.release(watched);
        backend.release(fresh);
        assertThat(firstClient.checkExists().forPath(ROOT + "/closed-a/holder")).isNull();
    }

    /**
     * A grant whose session ended has no holder left to release: its release must not touch a later holder, not even
     * one granted at the same counter version after an operator deleted the name (a version-checked delete would).
     */
    @Test
    void aReleaseFromAnEndedSessionLeavesALaterHolderAlone() throws Exception {
        ZooKeeperLeaseBackend stale = new ZooKeeperLeaseBackend(firstClient, ROOT, SESSION_TIMEOUT);
        backends.add(stale);
        ZkGrant old = stale.tryAcquire(new GrantRequest("ended", seconds(10), reason -> { }))
                .orElseThrow();
        ZooKeeperTesting.expireSessionAndReconnect(firstClient, server.getConnectString());
        secondClient.delete().deletingChildrenIfNeeded().forPath(ROOT + "/ended");
        ZooKeeperLeaseBackend later = new ZooKeeperLeaseBackend(secondClient, ROOT, SESSION_TIMEOUT);
        backends.add(later);
        ZkGrant successor = later.tryAcquire(new GrantRequest("ended", seconds(10),
                reason -> { })).orElseThrow();
        assertThat(successor.version()).as("the name started again").isEqualTo(old.version());

        stale.release(old);

        assertThat(secondClient.checkExists().forPath(ROOT + "/ended/holder")).as("the successor's holder").isNotNull();
        assertThat(later.renew(successor)).isTrue();
        later.release(successor);
    }

    /** A watch removed from under a held grant leaves its holder unwatched: the grant is lost, and says why. */
    @Test
    void aHolderWatchRemovedWhileHeldLosesTheGrant() throws Exception {
        ZooKeeperLeaseBackend backend = new ZooKeeperLeaseBackend(firstClient, ROOT, SESSION_TIMEOUT);
        List<String> reasons = new CopyOnWriteArrayList<>();
        ZkGrant grant = backend.tryAcquire(new GrantRequest("unwatched", seconds(10),
                reasons::add)).orElseThrow();
        assertThat(backend.renew(grant)).as("arms the watch").isTrue();
        firstClient.watchers().removeAll().locally().forPath(ROOT + "/unwatched/holder");
        await().atMost(seconds(10)).until(() -> !reasons.isEmpty());
        assertThat(reasons).singleElement().asString().contains("watch on its holder znode", "removed")
                .doesNotContain("deleted by someone else");
        assertThat(backend.renew(grant)).isFalse();
        backend.release(grant);
        backend.close();
    }

    /**
     * Two instances acquire and release a few names at random while both delete idle names as fast as they can
     * (idle after 1 ms): no grant may find its znodes deleted while held, and every name's tokens keep rising.
     */
    @Test
    void deletingIdleNamesNeverRacesAConcurrentAcquire() throws Exception {
        long seed = Long.getLong("lease-test.seed", System.nanoTime());
        log.info("deletingIdleNamesNeverRacesAConcurrentAcquire seed " + seed + " (rerun with -Dlease-test.seed=" + seed + ")");
        Random seeds = new Random(seed);
        List<ZooKeeperLeaseBackend> instances = List.of(
                backend(firstClient, ZooKeeperTokenSource.ZXID, Duration.ofMillis(1)),
                backend(secondClient, ZooKeeperTokenSource.ZXID, Duration.ofMillis(1)));
        String[] names = { "race-a", "race-b", "race-c" };
        Map<String, Long> lastToken = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> holders = new ConcurrentHashMap<>();
        AtomicInteger grants = new AtomicInteger();
        AtomicInteger deletions = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<Future<?>> work = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                ZooKeeperLeaseBackend backend = instances.get(t % 2);
                Random random = new Random(seeds.nextLong());
                work.add(pool.submit(() -> {
                    while (!stop.get()) {
                        String name = names[random.nextInt(names.length)];
                        Optional<ZkGrant> granted = grant(backend, name);
                        if (granted.isEmpty()) {
                            Thread.onSpinWait();
                            continue;
                        }
                        ZkGrant grant = granted.get();
                        AtomicInteger count = holders.computeIfAbsent(name, n -> new AtomicInteger());
                        assertThat(count.incrementAndGet()).as("holders of " + name).isEqualTo(1);
                        Long previous = lastToken.put(name, grant.value());
                        assertThat(grant.value()).as("token of " + name + " after " + previous)
                                .isGreaterThan(previous == null ? 0 : previous);
                        grants.incrementAndGet();
                        for (int i = random.nextInt(3); i > 0; i--) {
                            Thread.yield();
                        }
                        Stat holder = firstClient.checkExists().forPath(ROOT + "/" + name + "/holder");
                        assertThat(holder).as("holder of " + name + " while held").isNotNull();
                        assertThat(holder.getCzxid()).as("holder of " + name + " is the grant's").isEqualTo(grant.zxid());
                        assertThat(backend.renew(grant)).as("renewal of " + name).isTrue();
                        count.decrementAndGet();
                        backend.release(grant);
                    }
                    return null;
                }));
            }
            for (ZooKeeperLeaseBackend backend : instances) {
                work.add(pool.submit(() -> {
                    while (!stop.get()) {
                        deletions.addAndGet(backend.deleteIdleNamesNow());
                    }
                    return null;
                }));
            }
            await().atMost(seconds(60)).pollInterval(Duration.ofMillis(20))
                    .until(() -> grants.get() >= 300 && deletions.get() >= 30 || work.stream().anyMatch(Future::isDone));
            stop.set(true);
            for (Future<?> f : work) {
                f.get(seconds(30).toMillis(), TimeUnit.MILLISECONDS);
            }
        }
        finally {
            stop.set(true);
            pool.shutdownNow();
        }
        assertThat(grants.get()).as("grants").isGreaterThanOrEqualTo(300);
        assertThat(deletions.get()).as("idle deletions").isGreaterThanOrEqualTo(30);
    }

    private ZooKeeperLeaseBackend backend(CuratorFramework client, ZooKeeperTokenSource tokens, Duration deleteIdleAfter) {
        ZooKeeperLeaseBackend backend = new ZooKeeperLeaseBackend(client, ROOT, SESSION_TIMEOUT, tokens, deleteIdleAfter);
        backends.add(backend);
        return backend;
    }

    private static Optional<ZkGrant> grant(ZooKeeperLeaseBackend backend, String name) throws Exception {
        return backend.tryAcquire(new GrantRequest(name, seconds(10), reason -> { }));
    }
}
