package dev.lease.etcd;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;

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

    /** A key or value as jetcd takes it. */
    public static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }
}
