package dev.lease.fence.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

import dev.lease.LeaseConfigurationException;
import dev.lease.fence.Fence;

/**
 * {@code @FencedRequest} is enforced on Spring MVC only; in a WebFlux application (a real one, on Netty) it would be
 * silently ignored, so such an application fails to start, naming every fenced method.
 */
class WebFluxFencedRequestTest {

    @Test
    void aFencedWebFluxHandlerFailsTheStartupNamingEveryFencedMethod() {
        assertThatThrownBy(() -> start(Fenced.class).close()).satisfies(failure ->
                assertThat(NestedExceptionUtils.getMostSpecificCause(failure))
                        .isInstanceOf(LeaseConfigurationException.class)
                        .hasMessageContaining("@FencedRequest on Fenced.pay(long), @FencedRequest on Fenced.refund(long)")
                        .hasMessageContaining("WebFlux").hasMessageContaining("would never be checked")
                        .hasMessageContaining("Spring MVC"));
    }

    @Test
    void aWebFluxApplicationWithoutFencedRequestStartsAndServes() {
        try (ConfigurableApplicationContext app = start(Plain.class)) {
            var server = ((WebServerApplicationContext) app).getWebServer();
            assertThat(server.getClass().getSimpleName()).contains("Netty");
            String answer = WebClient.create("http://127.0.0.1:" + server.getPort()).post().uri("/pay/42").retrieve()
                    .bodyToMono(String.class).block(java.time.Duration.ofSeconds(30));
            assertThat(answer).isEqualTo("paid 42");
        }
    }

    private static ConfigurableApplicationContext start(Class<?> handler) {
        return new SpringApplicationBuilder(App.class, handler).web(WebApplicationType.REACTIVE).logStartupInfo(false)
                .properties(Map.of("server.port", "0", "spring.main.banner-mode", "off", "lease.backend", "in-memory"))
                .run();
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(OwnReactorResources.class)
    static class App {
        @Bean
        Fence fence() {
            return (resource, token) -> { };
        }
    }

    @RestController
    static class Fenced {
        @PostMapping("/pay/{invoice}")
        @FencedRequest(resource = "payment-#{#invoice}")
        public Mono<String> pay(@PathVariable long invoice) {
            return Mono.just("paid " + invoice);
        }

        @PostMapping("/refund/{invoice}")
        @FencedRequest(resource = "refund-#{#invoice}")
        public String refund(@PathVariable long invoice) {
            return "refunded " + invoice;
        }
    }

    @RestController
    static class Plain {
        @PostMapping("/pay/{invoice}")
        public Mono<String> pay(@PathVariable long invoice) {
            return Mono.just("paid " + invoice);
        }
    }
}
