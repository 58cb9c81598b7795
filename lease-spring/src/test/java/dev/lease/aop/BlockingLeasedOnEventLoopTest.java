package dev.lease.aop;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.test.StepVerifier;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.Leased;
import dev.lease.memory.InMemoryLeaseBackend;

/**
 * A blocking {@code @Leased} method called on a thread that must not block (issue 32, item 5) is refused before it
 * asks the store, naming the method and the reactive support to use instead: on a real Reactor Netty HTTP server's
 * event loop (the WebFlux case), on a plain Netty event loop, and on Reactor's parallel scheduler. Off those threads
 * it runs as before.
 */
class BlockingLeasedOnEventLoopTest {

    private static final String REFUSAL = "@Leased on Imports.importAll() (lease 'import') was called on '";

    @Test
    void refusedOnAReactorNettyHttpServersEventLoop() {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
                ReactiveLeasedMethodsTest.LeaseConfig.class, Imports.class)) {
            Imports imports = context.getBean(Imports.class);
            DisposableServer server = HttpServer.create().host("127.0.0.1").port(0)
                    .route(routes -> routes.get("/import", (request, response) -> response.sendString(
                            Mono.fromCallable(imports::importAll).onErrorResume(refused -> Mono.just(
                                    refused.getClass().getSimpleName() + ": " + refused.getMessage())))))
                    .bindNow();
            try {
                String answer = HttpClient.create().get().uri("http://127.0.0.1:" + server.port() + "/import")
                        .responseContent().aggregate().asString().block(seconds(30));
                assertThat(answer).startsWith("LeaseConfigurationException: " + REFUSAL + "reactor-http-")
                        .contains("a thread that must not block").contains("waitFor = 2s")
                        .contains("return Mono or Flux").contains("ReactiveLeaseTemplate");
            }
            finally {
                server.disposeNow();
            }
            assertNeverAskedTheStore(context);
            assertThat(imports.importAll()).as("on the test's own thread").isEqualTo("imported");
        }
    }

    @Test
    void refusedOnAPlainNettyEventLoopAndOnReactorsParallelScheduler() throws Exception {
        try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext(
                ReactiveLeasedMethodsTest.LeaseConfig.class, Imports.class)) {
            Imports imports = context.getBean(Imports.class);
            MultiThreadIoEventLoopGroup loop = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
            try {
                assertThatThrownBy(() -> loop.next().submit(imports::importAll).get(30, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class).cause()
                        .isInstanceOf(LeaseConfigurationException.class).hasMessageStartingWith(REFUSAL)
                        .hasMessageContaining("must not block");
            }
            finally {
                loop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            }
            StepVerifier.create(Mono.fromCallable(imports::importAll).subscribeOn(Schedulers.parallel()))
                    .expectErrorSatisfies(refused -> assertThat(refused).isInstanceOf(LeaseConfigurationException.class)
                            .hasMessageStartingWith(REFUSAL + "parallel-"))
                    .verify(seconds(30));
            assertNeverAskedTheStore(context);

            assertThat(Mono.fromCallable(imports::importAll).subscribeOn(Schedulers.boundedElastic()).block(seconds(30)))
                    .as("on a scheduler meant for blocking work").isEqualTo("imported");
        }
    }

    private static void assertNeverAskedTheStore(AnnotationConfigApplicationContext context) {
        assertThat(context.getBean(InMemoryLeaseBackend.class).lastToken("import")).as("granted").isEmpty();
        assertThat(context.getBean(Imports.class).runs()).as("runs of the body").isZero();
    }

    static class Imports {

        private final AtomicInteger runs = new AtomicInteger();

        @Leased(name = "import", kind = LeaseKind.CORRECTNESS, waitFor = "2s")
        public String importAll() {
            runs.incrementAndGet();
            return "imported";
        }

        // Read through a method: the fields of a class proxy are not the target's.
        public int runs() {
            return runs.get();
        }
    }
}
