package dev.lease.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;

import io.etcd.jetcd.Client;

import dev.lease.etcd.EtcdLeaseBackend;
import dev.lease.testing.EtcdServer;

/**
 * The etcd rows, on one member of Debian's etcd started for them: uncontended acquire+release, handover to the next of
 * 8 and 64 waiters, and the cost of holding many leases, ours against the plain jetcd floor ({@link JetcdFloor}).
 * ShedLock's etcd provider ({@code shedlock-provider-etcd-jetcd}) is not served at ShedLock 7.10.1, the version of the
 * other ShedLock rows. Requests are counted on the server: the gRPC messages etcd received, from its own metrics.
 */
final class EtcdBenchmarks {

    private final Benchmarks harness;
    private final Benchmarks.Settings settings;

    EtcdBenchmarks(Benchmarks harness, Benchmarks.Settings settings) {
        this.harness = harness;
        this.settings = settings;
    }

    /** Runs the asked comparisons; none, with a line on stderr, when etcd is not installed. */
    void run(boolean uncontended, boolean hold) throws Exception {
        if (!EtcdServer.installed()) {
            System.err.println("etcd rows skipped: " + EtcdServer.NOT_INSTALLED);
            return;
        }
        EtcdServer etcd = harness.own(EtcdServer.start(1));
        String endpoint = etcd.endpoint(0);
        HoldCost.Counter requests = () -> receivedMessages(etcd);
        if (uncontended) {
            uncontendedAndHandover(endpoint, requests);
        }
        if (hold) {
            // The full run's timing in a smoke run too: etcd's shortest lease is about 2 s whatever is asked, and a
            // 1.5 s local validity leaves a loaded machine's etcd round trips (hundreds of ms) too little room.
            Benchmarks.Settings full = Benchmarks.Settings.fullRun();
            Client client = client(endpoint);
            HoldCost holdCost = new HoldCost(harness, settings);
            for (int count : settings.holdCounts()) {
                EtcdLeaseBackend backend = harness.own(new EtcdLeaseBackend(client, "/hold/"));
                holdCost.hold("etcd", count, backend, requests, full.holdTtl(), full.holdRenew(),
                        "round trips = gRPC messages etcd received (keep-alives, checks, leftover deletions)");
                JetcdFloor.hold(harness, client, count, full.holdTtl(), full.holdRenew(), settings.holdTicks(),
                        requests, HoldCost.holdSection(count));
            }
        }
    }

    private void uncontendedAndHandover(String endpoint, HoldCost.Counter requests) throws Exception {
        Client first = client(endpoint);
        Client second = client(endpoint);
        Ours ours1 = harness.own(new Ours(new EtcdLeaseBackend(first, "/leases/")));
        Ours ours2 = harness.own(new Ours(new EtcdLeaseBackend(second, "/leases/")));
        List<Contender> contenders = List.of(
                Contender.of("lease LeaseTemplate", ours1.template(), ours2.template()),
                new Contender("lease @Leased", null, null, ours1.leased("u-leased")),
                Contender.of("plain jetcd (floor)", JetcdFloor.locker(first, Ours.TTL),
                        JetcdFloor.locker(second, Ours.TTL)));
        java.util.function.LongSupplier trips = () -> {
            try {
                return requests.roundTrips();
            }
            catch (Exception ex) {
                throw new IllegalStateException(ex);
            }
        };
        new Uncontended(harness, settings).run("etcd: uncontended acquire+release", contenders, trips,
                "etcd requests per acquire+release (gRPC messages the server received)");
        Handover handover = new Handover(harness, settings);
        for (int waiters : settings.smoke() ? new int[] {8} : new int[] {8, 64}) {
            handover.run("etcd: handover, " + waiters + " waiter(s)", contenders, waiters, trips,
                    "etcd requests per handover (all threads)");
        }
    }

    /** A client with jetcd's defaults (a keep-alive ping every 30 s, which etcd's 5 s minimum allows). */
    private Client client(String endpoint) {
        return harness.own(Client.builder().endpoints(endpoint).build());
    }

    /** Every request message etcd received ({@link EtcdServer#receivedRequests}). */
    private static long receivedMessages(EtcdServer etcd) {
        try {
            return etcd.receivedRequests(0);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("reading etcd's metrics at " + etcd.endpoint(0), ex);
        }
    }
}
