package dev.lease.benchmarks;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.support.CloseableClient;
import io.etcd.jetcd.watch.WatchEvent;
import io.grpc.stub.StreamObserver;

/**
 * The floor of the etcd rows: what plain jetcd does with the fewest requests, without fencing checks or waiting
 * smarts. A lock is an etcd lease of the ttl plus one put-if-absent transaction bound to it; a release is a delete
 * transaction conditional on the key's create_revision plus a revoke (sent, not awaited, as ours is); a waiter watches
 * the key from the revision it saw for a deletion, then tries again (every waiter, each with its own watch). Holding
 * uses jetcd's own keep-alive loop ({@code Lease.keepAlive}: one stream per client, a keep-alive per lease every ttl/3),
 * which checks no key.
 */
final class JetcdFloor {

    private static final String PREFIX = "/floor/";

    private JetcdFloor() {
    }

    /** One application instance's locks on {@code client}. */
    static Locker locker(Client client, Duration ttl) {
        KV kv = client.getKVClient();
        Lease leases = client.getLeaseClient();
        Watch watch = client.getWatchClient();
        long ttlSeconds = Math.max(1, ttl.toSeconds());
        return name -> {
            ByteSequence key = bytes(PREFIX + name);
            while (true) {
                long lease = leases.grant(ttlSeconds).get().getID();
                TxnResponse answer = kv.txn().If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                        .Then(Op.put(key, bytes("held"), PutOption.builder().withLeaseId(lease).build()))
                        .Else(Op.get(key, GetOption.DEFAULT)).commit().get();
                if (answer.isSucceeded()) {
                    long created = answer.getHeader().getRevision();
                    return () -> {
                        kv.txn().If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(created)))
                                .Then(Op.delete(key, DeleteOption.DEFAULT)).commit().get();
                        leases.revoke(lease);
                    };
                }
                leases.revoke(lease);
                awaitDeletion(watch, key, answer.getHeader().getRevision());
            }
        };
    }

    private static void awaitDeletion(Watch watch, ByteSequence key, long seen) throws InterruptedException {
        CountDownLatch deleted = new CountDownLatch(1);
        WatchOption from = WatchOption.builder().withRevision(seen + 1).withNoPut(true).build();
        try (Watch.Watcher watcher = watch.watch(key, from, response -> {
            if (response.getEvents().stream().anyMatch(e -> e.getEventType() == WatchEvent.EventType.DELETE)) {
                deleted.countDown();
            }
        })) {
            deleted.await(30, TimeUnit.SECONDS);
        }
    }

    /**
     * Holds {@code count} locks on jetcd's keep-alive loop for {@code ticks} intervals of {@code renew}, and adds the
     * rows of the hold comparison: requests per tick (etcd's count), CPU per tick, and locks lost (keys gone at the
     * end).
     */
    static void hold(Benchmarks harness, Client client, int count, Duration ttl, Duration renew, int ticks,
            HoldCost.Counter requests, String section) throws Exception {
        KV kv = client.getKVClient();
        Lease leases = client.getLeaseClient();
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        List<Long> granted = java.util.Collections.synchronizedList(new ArrayList<>());
        List<CloseableClient> keepAlives = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicInteger lost = new AtomicInteger();
        Throwable error = Acquirers.run(count, 4, i -> {
            ByteSequence key = bytes(PREFIX + "hold-" + count + "-" + i);
            long lease = leases.grant(ttl.toSeconds()).get().getID();
            granted.add(lease);
            if (!kv.txn().If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                    .Then(Op.put(key, bytes("held"), PutOption.builder().withLeaseId(lease).build()))
                    .commit().get().isSucceeded()) {
                throw new IllegalStateException(key + " busy");
            }
            keepAlives.add(leases.keepAlive(lease, new LossCounter(lost)));
        });
        String failure = error == null ? null : error.toString();
        double measuredTicks = 0;
        long trips = 0;
        long cpu = 0;
        if (failure == null) {
            Thread.sleep(renew.toMillis());
            long trips0 = requests.roundTrips();
            long cpu0 = os.getProcessCpuTime();
            long start = System.nanoTime();
            Thread.sleep(renew.toMillis() * ticks);
            cpu = os.getProcessCpuTime() - cpu0;
            trips = requests.roundTrips() - trips0;
            measuredTicks = (System.nanoTime() - start) / (double) renew.toNanos();
        }
        // Lost: the key is gone (its lease expired). jetcd's observers also hear of stream errors it recovers from.
        long held = failure != null ? 0 : kv.get(bytes(PREFIX + "hold-" + count + "-"), GetOption.builder()
                .isPrefix(true).withCountOnly(true).build()).get().getCount();
        keepAlives.forEach(CloseableClient::close);
        granted.parallelStream().forEach(leases::revoke);
        if (failure == null && held < count) {
            failure = (count - held) + " of " + count + " locks lost while held";
        }
        String contender = "plain jetcd keepAlive (floor)";
        String note = (failure == null ? "" : "FAILED: " + failure + "; ")
                + "round trips = gRPC messages etcd received; jetcd sends a keep-alive per lease every ttl/3; "
                + lost.get() + " keep-alive errors or deadlines reported to the observers"
                + String.format(Locale.ROOT, "; %.1f ticks of %d ms measured (ttl %d ms)", measuredTicks,
                        renew.toMillis(), ttl.toMillis());
        harness.addRow(new Row(section, contender, "round trips per renewal tick (all leases)", trips / measuredTicks,
                Double.NaN, 1, Double.NaN, note));
        harness.addRow(new Row(section, contender, "round trips per lease per tick", trips / measuredTicks / count,
                Double.NaN, 1, Double.NaN, null));
        harness.addRow(new Row(section, contender, "process CPU ms per renewal tick", cpu / 1e6 / measuredTicks,
                Double.NaN, 1, Double.NaN, null));
    }

    /** Counts what jetcd's keep-alive loop reports to its observers: errors, and its wall-clock deadline passing. */
    private record LossCounter(AtomicInteger lost) implements StreamObserver<LeaseKeepAliveResponse> {

        @Override
        public void onNext(LeaseKeepAliveResponse value) {
        }

        @Override
        public void onError(Throwable t) {
            lost.incrementAndGet();
        }

        @Override
        public void onCompleted() {
            lost.incrementAndGet();
        }
    }

    private static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }
}
