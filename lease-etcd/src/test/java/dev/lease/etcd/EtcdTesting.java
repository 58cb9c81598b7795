package dev.lease.etcd;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;

import dev.lease.LeaseKind;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.LeaseBackend;
import dev.lease.testing.TestTiming;

/** Clients on the etcd servers the tests start; shared with the auto-configuration tests and the fault suite. */
public final class EtcdTesting {

    private EtcdTesting() {
    }

    /** A client on the comma-separated {@code endpoints}, with short timeouts so that a dead member shows soon. */
    public static Client client(String endpoints) {
        return Client.builder().endpoints(Arrays.stream(endpoints.split(",")).map(String::trim).toArray(String[]::new))
                .connectTimeout(TestTiming.seconds(2))
                .keepaliveTime(Duration.ofSeconds(2))
                .keepaliveTimeout(TestTiming.seconds(2))
                .retryMaxDuration(TestTiming.seconds(5))
                .build();
    }

    /** An engine with the project's defaults whose CORRECTNESS leases go to {@code backend}; the caller closes it. */
    public static LeaseEngine engine(EtcdLeaseBackend backend) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        return new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
    }

    /** A key or value as jetcd takes it. */
    public static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }
}
