package dev.lease.reactive;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import dev.lease.FencingToken;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseUnavailableException;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.testing.EmbeddedZooKeeper;
import dev.lease.zookeeper.ZooKeeperLeaseBackend;

/**
 * What a cancel means, on a real ZooKeeper with two instances (each its own client, session and engine): a subscriber
 * that cancels a section whose work blocks on {@code boundedElastic} and ignores the interrupt does not free the name
 * for the other instance while that work still runs. The lease is kept for the rest of its validity, then released.
 */
class ReactiveCancelOnZooKeeperTest {

    /** The session, and so the leases' ttl (renewed every third of it): the server's tick is 250 ms. */
    private static final Duration SESSION = Duration.ofSeconds(8);
    /**
     * How long the other instance tries while the cancelled work runs: well within what is left of the first lease's
     * validity at the cancel (at least two thirds of the ttl, renewals keeping it so), not scaled for that reason.
     */
    private static final Duration TRYING = Duration.ofSeconds(2);

    private static final EmbeddedZooKeeper zooKeeper = EmbeddedZooKeeper.start();

    private final LeaseSpec spec = LeaseSpec.of("export-" + System.nanoTime(), LeaseKind.CORRECTNESS);
    private CuratorFramework firstClient;
    private CuratorFramework secondClient;
    private LeaseEngine first;
    private LeaseEngine second;

    @AfterAll
    static void stopServer() {
        zooKeeper.close();
    }

    @BeforeEach
    void startInstances() throws InterruptedException {
        firstClient = client();
        secondClient = client();
        first = engine(firstClient);
        second = engine(secondClient);
    }

    @AfterEach
    void stopInstances() {
        first.close();
        second.close();
        firstClient.close();
        secondClient.close();
    }

    @Test
    void aCancelledSectionKeepsItsLeaseWhileItsWorkRunsThenReleasesItAtTheEndOfItsValidity() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch mayEnd = new CountDownLatch(1);
        CountDownLatch ended = new CountDownLatch(1);
        AtomicReference<FencingToken> firstToken = new AtomicReference<>();
        Mono<String> blockingWork = ReactiveLeaseContext.token().flatMap(token -> Mono.fromCallable(() -> {
            firstToken.set(token);
            started.countDown();
            awaitIgnoringInterrupts(mayEnd);
            ended.countDown();
            return "exported";
        }).subscribeOn(Schedulers.boundedElastic()));
        try {
            Disposable subscription = new ReactiveLeaseTemplate(first).execute(spec, lease -> blockingWork).subscribe();
            assertThat(started.await(seconds(30).toMillis(), TimeUnit.MILLISECONDS)).as("the work started").isTrue();

            subscription.dispose();

            AtomicBoolean ranBesideTheWork = new AtomicBoolean();
            StepVerifier.create(new ReactiveLeaseTemplate(second).execute(spec.withWaitFor(TRYING),
                    lease -> Mono.fromRunnable(() -> ranBesideTheWork.set(ended.getCount() > 0))))
                    .expectError(LeaseUnavailableException.class)
                    .verify(TRYING.plus(seconds(30)));
            assertThat(ranBesideTheWork).as("the other instance's section ran beside the cancelled work").isFalse();
            assertThat(ended.getCount()).as("the cancelled work still runs").isOne();
        }
        finally {
            mayEnd.countDown();
        }
        assertThat(ended.await(seconds(30).toMillis(), TimeUnit.MILLISECONDS)).as("the work ended").isTrue();

        FencingToken next = new ReactiveLeaseTemplate(second)
                .execute(spec.withWaitFor(SESSION.plus(seconds(30))), lease -> ReactiveLeaseContext.token())
                .block(SESSION.plus(seconds(60)));
        assertThat(next.value()).as("the other instance's token").isGreaterThan(firstToken.get().value());
        assertThat(first.held()).as("released by the first instance").isEmpty();
    }

    /** Blocking work that ignores the interrupt, as much code does. */
    private static void awaitIgnoringInterrupts(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            }
            catch (InterruptedException ignored) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private static LeaseEngine engine(CuratorFramework client) {
        ZooKeeperLeaseBackend backend = new ZooKeeperLeaseBackend(client, "/leases", SESSION);
        return new LeaseEngine(BackendRouter.of(Map.of(LeaseKind.CORRECTNESS, backend)),
                new LeaseDefaults(SESSION, null));
    }

    private static CuratorFramework client() throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.builder().connectString(zooKeeper.connectString())
                .sessionTimeoutMs((int) SESSION.toMillis()).connectionTimeoutMs((int) seconds(2).toMillis())
                .retryPolicy(new ExponentialBackoffRetry(100, 3)).build();
        client.start();
        assertThat(client.blockUntilConnected((int) seconds(20).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        return client;
    }
}
