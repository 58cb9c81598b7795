package dev.lease.fence.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.reactivestreams.Publisher;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.request.async.WebAsyncTask;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.lease.LeaseConfigurationException;

/**
 * A {@code @FencedRequest} handler whose work Spring MVC runs after it returned would pass the fence and commit before
 * that work ran, so a stale holder's write could land after a newer one: each asynchronous return type Spring MVC
 * accepts fails the startup of a real Boot application on Tomcat, naming the handler (each {@code @Transactional}, as
 * a fenced handler on {@code JdbcFence} must be, so that nothing else refuses it); one declared {@code Object}
 * that returns such work is refused when it does, its fence move rolled back.
 */
class AsyncFencedHandlersTest {

    @ParameterizedTest(name = "{0}")
    @ValueSource(classes = {CallableHandler.class, WebAsyncTaskHandler.class, DeferredResultHandler.class,
            CompletionStageHandler.class, CompletableFutureHandler.class, PublisherHandler.class, MonoHandler.class,
            FluxHandler.class, EmitterHandler.class, SseHandler.class, StreamingHandler.class,
            EntityOfCallableHandler.class, EntityOfStreamingHandler.class, EntityOfMonoHandler.class})
    void anAsynchronousHandlerFailsTheStartup(Class<?> handler) {
        assertThatThrownBy(() -> start(handler).close()).satisfies(failure ->
                assertThat(NestedExceptionUtils.getMostSpecificCause(failure))
                        .isInstanceOf(LeaseConfigurationException.class)
                        .hasMessageContaining("@FencedRequest on " + handler.getSimpleName() + ".pay(long)")
                        .hasMessageContaining("after the handler returned")
                        .hasMessageContaining("return its result"));
    }

    /** The startup check sees declared types only; what an {@code Object} handler returns is checked when it does. */
    @Test
    void anObjectHandlerReturningAsynchronousWorkIsRefusedAndItsFenceMoveRolledBack() {
        try (ConfigurableApplicationContext app = start(ObjectHandler.class)) {
            RestClient client = RestClient.create(PaymentsApp.baseUrl(app));
            // A synchronous answer from the same handler works (and JdbcFence's table is there to be read).
            assertThat(client.post().uri("/pay/43").header(FencingTokenHeader.NAME, "7;lease=\"l\"").retrieve()
                    .body(String.class)).isEqualTo("paid 43");
            assertThatThrownBy(() -> client.post().uri("/pay/42").header(FencingTokenHeader.NAME, "7;lease=\"l\"")
                    .retrieve().toBodilessEntity())
                    .satisfies(e -> assertThat(HttpStatuses.of(e).status()).isEqualTo(500));
            assertThat(ObjectHandler.calls).as("runs of the refused work").hasValue(0);
            JdbcTemplate jdbc = app.getBean(JdbcTemplate.class);
            assertThat(jdbc.queryForList("SELECT fence FROM lease_fence WHERE resource = 'payment-42'", Long.class))
                    .as("the fence move of the refused call").isEmpty();
        }
    }

    private static ConfigurableApplicationContext start(Class<?> handler) {
        return new SpringApplicationBuilder(App.class, handler).logStartupInfo(false)
                .properties(Map.of("server.port", "0", "spring.main.banner-mode", "off", "lease.backend", "in-memory",
                        "spring.datasource.url", "jdbc:h2:mem:async-" + System.nanoTime() + ";DB_CLOSE_DELAY=-1"))
                .run();
    }

    /** The service: Tomcat, the auto-configured JdbcFence on H2. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
    }

    /** The audit's hole: the transaction commits with the fence move, before the callable writes. */
    @RestController
    static class CallableHandler {
        @PostMapping("/pay/{invoice}")
        @Transactional
        @FencedRequest(resource = "payment-#{#invoice}")
        public Callable<String> pay(@PathVariable long invoice) {
            return () -> "paid";
        }
    }

    @RestController
    static class WebAsyncTaskHandler {
        @PostMapping("/pay/{invoice}")
        @Transactional
        @FencedRequest(resource = "payment-#{#invoice}")
        public WebAsyncTask<String> pay(@PathVariable long invoice) {
            return new WebAsyncTask<>(() -> "paid");
        }
    }

    @RestController
    static class DeferredResultHandler {
        @PostMapping("/pay/{invoice}")
        @Transactional
        @FencedRequest(resource = "payment-#{#invoice}")
        public DeferredResult<String> pay(@PathVariable long invoice) {
            return new DeferredResult<>();
        }
    }

    @RestController
    static class CompletionStageHandler {
        @PostMapping("/pay/{invoice}")
        @Transactional
        @FencedRequest(resource = "payment-#{#invoice}")
        public CompletionStage<String> pay(@PathVariable long invoice) {
            return CompletableFuture.completedFuture("paid");
        }
    }

    @RestController
    static class CompletableFutureHandler {
        @PostMapping("/pay/{invoice}")
        @Transactional
        @FencedRequest(resource = "payment-#{#invoice}")
        public CompletableFuture<String> pay(@PathVariable long invoice) {
            return CompletableFuture.completedFuture("paid");
        }
    }

    @RestController
    static class PublisherHandler {
        @PostMapping("/pay/{invoice}")
        @Transactional
        @FencedRequest(resource = "payment-#{#invoice}")
        public Publisher<String> pay(@PathVariable long invoice) {
            return Mono.just("paid");
        }
    }

    @RestController
    static class MonoHandler {
        @PostMapping("/pay/{invoice}")
        @Transactional
        @FencedRequest(resource = "payment-#{#invoice}")
        public Mono<String> pay(@PathVariable long invoice) {
            return Mono.just("paid");
        }
    }

    @RestController
    static class FluxHandler {
        @PostMapping("/pay/{invoice}")
        @Transactional
        @FencedRequest(resource = "payment-#{#invoice}")
        public Flux<String> pay(@PathVariable long invoice) {
            return Flux.just("paid");
        }
    }

    @RestController
    static class EmitterHandler {
        @PostMapping("/pay/{invoice}")
        @Transactional
        @FencedRequest(resource = "payment-#{#invoice}")
        public ResponseBodyEmitter pay(@PathVariable long invoice) {
            return new ResponseBodyEmitter();
        }
    }

    @RestController
    static class SseHandler {
        @PostMapping("/pay/{invoice}")
        @Transactional
        @FencedRequest(resource = "payment-#{#invoice}")
        public SseEmitter pay(@PathVariable long invoice) {
            return new SseEmitter();
        }
    }

    @RestController
    static class StreamingHandler {
        @PostMapping("/pay/{invoice}")
        @Transactional
        @FencedRequest(resource = "payment-#{#invoice}")
        public StreamingResponseBody pay(@PathVariable long invoice) {
            return out -> out.write(1);
        }
    }

    @RestController
    static class EntityOfCallableHandler {
        @PostMapping("/pay/{invoice}")
        @Transactional
        @FencedRequest(resource = "payment-#{#invoice}")
        public ResponseEntity<Callable<String>> pay(@PathVariable long invoice) {
            return ResponseEntity.ok(() -> "paid");
        }
    }

    @RestController
    static class EntityOfStreamingHandler {
        @PostMapping("/pay/{invoice}")
        @Transactional
        @FencedRequest(resource = "payment-#{#invoice}")
        public ResponseEntity<StreamingResponseBody> pay(@PathVariable long invoice) {
            return ResponseEntity.ok(out -> out.write(1));
        }
    }

    @RestController
    static class EntityOfMonoHandler {
        @PostMapping("/pay/{invoice}")
        @Transactional
        @FencedRequest(resource = "payment-#{#invoice}")
        public ResponseEntity<Mono<String>> pay(@PathVariable long invoice) {
            return ResponseEntity.ok(Mono.just("paid"));
        }
    }

    /** Declared {@code Object}: asynchronous work for invoice 42, a plain answer otherwise. */
    @RestController
    static class ObjectHandler {
        static final AtomicInteger calls = new AtomicInteger();

        @PostMapping("/pay/{invoice}")
        @Transactional
        @FencedRequest(resource = "payment-#{#invoice}")
        public Object pay(@PathVariable long invoice) {
            if (invoice == 42) {
                return (Callable<String>) () -> "paid " + calls.incrementAndGet();
            }
            return "paid " + invoice;
        }
    }
}
