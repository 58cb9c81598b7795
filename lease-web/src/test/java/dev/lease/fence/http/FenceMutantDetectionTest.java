package dev.lease.fence.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

import dev.lease.fence.http.BillingApp.Client;
import dev.lease.fence.http.FencedCallsEndToEndTest.PausedHolderRun;
import dev.lease.testing.EmbeddedZooKeeper;

/**
 * The paused-holder scenario of {@link FencedCallsEndToEndTest} against a payments service whose fence lost its
 * comparison (it moves to any token): the scenario must see the stale call accepted and the invoice paid twice. A
 * check that passes against this mutant would prove nothing.
 */
class FenceMutantDetectionTest {

    private EmbeddedZooKeeper zooKeeper;
    private ConfigurableApplicationContext payments;
    private ConfigurableApplicationContext billing;
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @BeforeEach
    void start() {
        zooKeeper = EmbeddedZooKeeper.start();
        payments = PaymentsApp.start(true);
        billing = BillingApp.start(zooKeeper.connectString());
    }

    @AfterEach
    void stop() {
        threads.shutdownNow();
        billing.close();
        payments.close();
        zooKeeper.close();
    }

    @Test
    void theScenarioDetectsAFenceWithoutItsComparison() throws Exception {
        long invoice = 800;
        PausedHolderRun run = PausedHolderRun.run(zooKeeper, billing, payments, Client.REST_CLIENT, invoice, threads);
        assertThat(run.problems(payments, invoice)).as("what the scenario reports against the mutant")
                .anyMatch(p -> p.contains("was not refused")).anyMatch(p -> p.contains("was paid with tokens"));
        assertThat(PaymentsApp.payments(payments, invoice)).as("the stale call went through: paid twice")
                .containsExactly(run.tokenOfB().value(), run.tokenOfA().value());
    }
}
