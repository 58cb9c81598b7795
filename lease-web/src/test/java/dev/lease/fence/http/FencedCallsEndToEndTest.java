package dev.lease.fence.http;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.scheduler.Schedulers;

import dev.lease.FencingToken;
import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.fence.StaleTokenException;
import dev.lease.fence.http.BillingApp.Client;
import dev.lease.testing.EmbeddedZooKeeper;
import dev.lease.testing.TcpProxy;

/**
 * Two real Boot applications over real HTTP: billing instances holding CORRECTNESS leases on a real ZooKeeper call
 * the payments service (Tomcat, random port), which fences on the {@code Fencing-Token} header. Each case runs with
 * RestClient, WebClient and RestTemplate.
 */
class FencedCallsEndToEndTest {

    private static EmbeddedZooKeeper zooKeeper;
    private static ConfigurableApplicationContext payments;
    private static ConfigurableApplicationContext billing;
    private static String url;
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @BeforeAll
    static void start() {
        zooKeeper = EmbeddedZooKeeper.start();
        payments = PaymentsApp.start(false);
        billing = BillingApp.start(zooKeeper.connectString());
        url = PaymentsApp.baseUrl(payments);
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable c : new AutoCloseable[] {billing, payments, zooKeeper}) {
            try {
                if (c != null) {
                    c.close();
                }
            }
            catch (Exception ignored) {
                // Best effort.
            }
        }
    }

    private static LeaseSpec lease(long invoice) {
        return LeaseSpec.of("invoice-" + invoice, LeaseKind.CORRECTNESS).withWaitFor(seconds(30));
    }

    @ParameterizedTest
    @EnumSource(Client.class)
    void aPausedHolderThatWakesIsRefusedWith409AndItsSuccessorIsAccepted(Client client) throws Exception {
        long invoice = 100 + client.ordinal();
        PausedHolderRun run = PausedHolderRun.run(zooKeeper, billing, payments, client, invoice, threads);

        assertThat(run.problems(payments, invoice)).isEmpty();
        assertThat(run.refusal().resource()).isEqualTo("payment-" + invoice);
        assertThat(run.thrownByA()).as("the paused holder's section ends with the refusal as cause")
                .hasRootCauseInstanceOf(StaleTokenException.class);
        assertThat(run.rejectedCounted()).as("lease.fence.rejected on the payments service").isEqualTo(1);
    }

    @ParameterizedTest
    @EnumSource(Client.class)
    void theSameHolderMayCallAgainWithItsToken(Client client) {
        long invoice = 200 + client.ordinal();
        FencingToken token = billing.getBean(LeaseTemplate.class).execute(lease(invoice), held -> {
            assertThat(client.post(billing, url + "/payments/" + invoice)).isEqualTo("paid " + invoice);
            assertThat(client.post(billing, url + "/payments/" + invoice)).isEqualTo("paid " + invoice);
            return held.token();
        });
        assertThat(PaymentsApp.payments(payments, invoice)).containsExactly(token.value(), token.value());
    }

    @ParameterizedTest
    @EnumSource(Client.class)
    void aCallOutsideAnyLeaseIsRefusedWith428(Client client) {
        long invoice = 300 + client.ordinal();
        int before = PaymentsApp.handlerRuns.get();
        double countedBefore = PaymentsApp.tokenRequiredCount(payments, "missing");
        HttpStatuses answer = HttpStatuses.of(catchThrowable(() -> client.post(billing, url + "/payments/" + invoice)));
        assertThat(answer.status()).isEqualTo(428);
        assertThat(PaymentsApp.tokenRequiredCount(payments, "missing") - countedBefore)
                .as("lease.fence.token-required{reason=missing}").isEqualTo(1);
        assertThat(answer.body()).contains("urn:lease:problem:fencing-token-required")
                .contains("\"header\":\"Fencing-Token\"").contains("has no Fencing-Token header");
        assertThat(PaymentsApp.handlerRuns.get()).as("handler runs").isEqualTo(before);
        assertThat(PaymentsApp.payments(payments, invoice)).isEmpty();
    }

    @ParameterizedTest
    @EnumSource(Client.class)
    void aMalformedHeaderIsRefusedWith428NamingWhatIsWrong(Client client) {
        long invoice = 400 + client.ordinal();
        int before = PaymentsApp.handlerRuns.get();
        double countedBefore = PaymentsApp.tokenRequiredCount(payments, "malformed");
        HttpStatuses answer = HttpStatuses.of(catchThrowable(
                () -> client.post(billing, url + "/payments/" + invoice, "7;lease=invoice-" + invoice)));
        assertThat(answer.status()).isEqualTo(428);
        assertThat(PaymentsApp.tokenRequiredCount(payments, "malformed") - countedBefore)
                .as("lease.fence.token-required{reason=malformed}").isEqualTo(1);
        assertThat(answer.body()).contains("urn:lease:problem:fencing-token-required").contains("Fencing-Token")
                .contains("must be a String");
        assertThat(PaymentsApp.handlerRuns.get()).isEqualTo(before);
    }

    @ParameterizedTest
    @EnumSource(Client.class)
    void aTokenOfAnotherLeaseIsRefusedWith428(Client client) {
        long invoice = 500 + client.ordinal();
        int before = PaymentsApp.handlerRuns.get();
        double countedBefore = PaymentsApp.tokenRequiredCount(payments, "other-lease");
        Throwable thrown = catchThrowable(() -> billing.getBean(LeaseTemplate.class).execute(
                LeaseSpec.of("another-lease", LeaseKind.CORRECTNESS).withWaitFor(seconds(30)),
                held -> client.post(billing, url + "/payments/" + invoice)));
        HttpStatuses answer = HttpStatuses.of(thrown);
        assertThat(answer.status()).isEqualTo(428);
        assertThat(answer.body()).contains("lease 'another-lease'").contains("lease 'invoice-" + invoice + "'");
        assertThat(PaymentsApp.tokenRequiredCount(payments, "other-lease") - countedBefore)
                .as("lease.fence.token-required{reason=other-lease}").isEqualTo(1);
        assertThat(PaymentsApp.handlerRuns.get()).isEqualTo(before);
    }

    @ParameterizedTest
    @EnumSource(Client.class)
    void anOptedOutClientSendsNoToken(Client client) {
        long invoice = 600 + client.ordinal();
        Object optedOut = switch (client) {
            case REST_CLIENT -> billing.getBean(RestClient.Builder.class).apply(FencedHttpClients::withoutFencingToken)
                    .build();
            case WEB_CLIENT -> billing.getBean(WebClient.Builder.class).apply(FencedHttpClients::withoutFencingToken)
                    .build();
            case REST_TEMPLATE -> FencedHttpClients.withoutFencingToken(
                    billing.getBean(org.springframework.boot.restclient.RestTemplateBuilder.class).build());
        };
        Throwable thrown = catchThrowable(() -> billing.getBean(LeaseTemplate.class).execute(lease(invoice),
                held -> Client.post(optedOut, url + "/payments/" + invoice, null)));
        assertThat(HttpStatuses.of(thrown).status()).isEqualTo(428);
    }

    @Test
    void theFenceMovesInTheHandlersTransaction() {
        String answer = Client.REST_CLIENT.post(billing, url + "/refunds/1", "9;lease=\"invoice-1\"");
        assertThat(answer).as("the application's catch-all answered the handler's failure")
                .contains("refunds are closed");
        assertThat(payments.getBean(org.springframework.jdbc.core.JdbcTemplate.class).queryForList(
                "SELECT fence FROM lease_fence WHERE resource = 'refund-1'", Long.class))
                .as("the fence's move rolled back with the handler").isEmpty();
    }

    /** The filter runs where the exchange is subscribed; the token was taken where the request was built. */
    @Test
    void aWebClientRequestBuiltInsideTheLeaseCarriesItsTokenOnAnotherThread() {
        long invoice = 700;
        WebClient web = billing.getBean(WebClient.Builder.class).build();
        AtomicReference<String> subscribedOn = new AtomicReference<>();
        String answer = billing.getBean(LeaseTemplate.class).execute(lease(invoice), held -> web.post()
                .uri(url + "/payments/" + invoice).retrieve().bodyToMono(String.class)
                .doOnSubscribe(s -> subscribedOn.set(Thread.currentThread().getName()))
                .subscribeOn(Schedulers.boundedElastic()).block(seconds(30)));
        assertThat(answer).isEqualTo("paid " + invoice);
        assertThat(subscribedOn.get()).startsWith("boundedElastic");
    }

    /** The paused-holder scenario, reused against the fence mutant. */
    record PausedHolderRun(FencingToken tokenOfA, FencingToken tokenOfB, StaleTokenException refusal,
            Throwable thrownByA, String answerToB, double rejectedCounted) {

        static PausedHolderRun run(EmbeddedZooKeeper zooKeeper, ConfigurableApplicationContext successor,
                ConfigurableApplicationContext payments, Client client, long invoice, ExecutorService threads)
                throws Exception {
            String target = PaymentsApp.baseUrl(payments) + "/payments/" + invoice;
            double rejectedBefore = PaymentsApp.rejectedCount(payments);
            try (TcpProxy linkOfA = new TcpProxy(zooKeeper.port());
                    ConfigurableApplicationContext holderA = BillingApp.start(linkOfA.address())) {
                CountDownLatch holding = new CountDownLatch(1);
                CountDownLatch wake = new CountDownLatch(1);
                AtomicReference<Lease> leaseOfA = new AtomicReference<>();
                AtomicReference<StaleTokenException> refusal = new AtomicReference<>();
                Future<String> callOfA = threads.submit(() -> holderA.getBean(LeaseTemplate.class).execute(lease(invoice),
                        held -> {
                            leaseOfA.set(held);
                            holding.countDown();
                            pausedUntil(wake);
                            try {
                                return client.post(holderA, target);
                            }
                            catch (StaleTokenException stale) {
                                refusal.set(stale);
                                throw stale;
                            }
                        }));
                assertThat(holding.await(seconds(30).toMillis(), TimeUnit.MILLISECONDS)).as("A holds").isTrue();
                FencingToken tokenOfA = leaseOfA.get().token();

                linkOfA.freeze();
                AtomicReference<FencingToken> tokenOfB = new AtomicReference<>();
                String answerToB = successor.getBean(LeaseTemplate.class).execute(lease(invoice), held -> {
                    tokenOfB.set(held.token());
                    return client.post(successor, target);
                });
                // A's engine saw the loss (and interrupted A) before A wakes: the call is made by a holder that knows
                // nothing of it, as after a real pause.
                await().atMost(seconds(30)).until(() -> !leaseOfA.get().isValid());
                wake.countDown();
                Throwable thrownByA = catchThrowable(() -> callOfA.get(seconds(60).toMillis(), TimeUnit.MILLISECONDS));
                linkOfA.unfreeze();
                return new PausedHolderRun(tokenOfA, tokenOfB.get(), refusal.get(),
                        thrownByA == null ? null : thrownByA.getCause(), answerToB,
                        PaymentsApp.rejectedCount(payments) - rejectedBefore);
            }
        }

        /**
         * What the run shows that must not happen, empty when the fence did its job: the woken holder's call was
         * refused as stale (with both tokens), the successor's accepted, and the invoice paid once, by the successor.
         */
        java.util.List<String> problems(ConfigurableApplicationContext payments, long invoice) {
            java.util.List<String> problems = new java.util.ArrayList<>();
            if (refusal == null) {
                problems.add("the woken holder's call was not refused with StaleTokenException: " + thrownByA);
            }
            else if (!refusal.presented().equals(tokenOfA) || refusal.current() != tokenOfB.value()) {
                problems.add("the refusal names " + refusal.presented() + " / " + refusal.current() + ", not "
                        + tokenOfA + " / " + tokenOfB.value());
            }
            if (!("paid " + invoice).equals(answerToB)) {
                problems.add("the successor's call was answered " + answerToB);
            }
            java.util.List<Long> paid = PaymentsApp.payments(payments, invoice);
            if (!paid.equals(java.util.List.of(tokenOfB.value()))) {
                problems.add("invoice " + invoice + " was paid with tokens " + paid + ", not once with "
                        + tokenOfB.value());
            }
            return problems;
        }

        /** A paused thread does not see its interrupt until it runs again; then it goes on to call, as here. */
        private static void pausedUntil(CountDownLatch wake) {
            while (true) {
                try {
                    if (wake.await(seconds(120).toMillis(), TimeUnit.MILLISECONDS)) {
                        Thread.interrupted();
                        return;
                    }
                    throw new AssertionError("never woken");
                }
                catch (InterruptedException ex) {
                    // The engine's interrupt on loss: ignored, like a holder stuck in a GC pause.
                }
            }
        }
    }

}
