package dev.lease.fence.http;

import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

/**
 * Turns off, for one client, what the auto-configuration adds to every Boot-built {@code RestClient},
 * {@code RestTemplate} and {@code WebClient}: the {@code Fencing-Token} header and the mapping of a 409 stale-token
 * answer to {@link dev.lease.fence.StaleTokenException}. For a client whose calls must not carry the lease's token,
 * such as one to a third party:
 *
 * <pre>{@code
 * RestClient partner = restClientBuilder.apply(FencedHttpClients::withoutFencingToken).build();
 * }</pre>
 */
public final class FencedHttpClients {

    private FencedHttpClients() {
    }

    /**
     * Removes the fencing-token interceptor from a {@code RestClient} builder.
     *
     * @param builder a builder, such as Boot's prototype {@code RestClient.Builder} bean
     */
    public static void withoutFencingToken(RestClient.Builder builder) {
        builder.requestInterceptors(list -> list.removeIf(FencingTokenRequestInterceptor.class::isInstance));
    }

    /**
     * Removes the fencing-token interceptor from a {@code RestTemplate}.
     *
     * @param template a template, such as one built by Boot's {@code RestTemplateBuilder}
     * @return the same template
     */
    public static RestTemplate withoutFencingToken(RestTemplate template) {
        template.getInterceptors().removeIf(FencingTokenRequestInterceptor.class::isInstance);
        return template;
    }

    /**
     * Removes the fencing-token filter from a {@code WebClient} builder.
     *
     * @param builder a builder, such as Boot's prototype {@code WebClient.Builder} bean
     */
    public static void withoutFencingToken(org.springframework.web.reactive.function.client.WebClient.Builder builder) {
        builder.filters(list -> list.removeIf(FencingTokenExchangeFilter.class::isInstance));
    }
}
