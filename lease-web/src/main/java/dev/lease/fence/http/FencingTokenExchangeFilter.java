package dev.lease.fence.http;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.function.Consumer;

import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

import dev.lease.FencingToken;
import dev.lease.LeaseContext;
import dev.lease.fence.StaleTokenException;

/**
 * For {@code WebClient}: a request built inside a leased section carries the lease's {@code Fencing-Token}, and a
 * 409 stale-token answer becomes a {@link StaleTokenException} error signal.
 *
 * <p>The lease is bound to a thread, but a WebClient exchange runs when it is subscribed to, possibly on another
 * thread. So the token is taken when the request is built, on the calling thread ({@link #capture}, a
 * {@code defaultRequest} of the builder: it runs at {@code retrieve()} / {@code exchangeToMono(...)} time), and kept
 * as a request attribute; the filter falls back to the thread it runs on. A request built outside any leased section
 * and subscribed outside one carries no header: the server then answers 428, never accepts it unfenced.
 */
final class FencingTokenExchangeFilter implements ExchangeFilterFunction {

    /** The request attribute holding the token captured where the request was built. */
    static final String TOKEN_ATTRIBUTE = FencingTokenExchangeFilter.class.getName() + ".token";

    /** Takes the token of the thread building the request. */
    static Consumer<WebClient.RequestHeadersSpec<?>> capture() {
        return spec -> LeaseContext.findToken().ifPresent(token -> spec.attribute(TOKEN_ATTRIBUTE, token));
    }

    @Override
    public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
        Optional<FencingToken> token = request.attribute(TOKEN_ATTRIBUTE).map(FencingToken.class::cast)
                .or(LeaseContext::findToken);
        if (token.isEmpty() || request.headers().containsHeader(FencingTokenHeader.NAME)) {
            return next.exchange(request);
        }
        FencingToken sent = token.get();
        Optional<String> header = FencingTokenHeader.formatForClients(sent);
        if (header.isEmpty()) {
            return next.exchange(request);
        }
        ClientRequest fenced = ClientRequest.from(request).headers(h -> h.set(FencingTokenHeader.NAME, header.get()))
                .build();
        return next.exchange(fenced).flatMap(response -> refuseStale(response, sent));
    }

    private static Mono<ClientResponse> refuseStale(ClientResponse response, FencingToken sent) {
        if (response.statusCode().value() != 409
                || !FencingProblems.isProblemJson(
                        response.headers().asHttpHeaders().getFirst(HttpHeaders.CONTENT_TYPE))) {
            return Mono.just(response);
        }
        return response.bodyToMono(byte[].class).defaultIfEmpty(new byte[0]).flatMap(body -> {
            Optional<StaleTokenException> stale = body.length > FencingProblems.MAX_BODY ? Optional.empty()
                    : FencingProblems.readStale(body, sent);
            if (stale.isPresent()) {
                return Mono.error(stale.get());
            }
            return Mono.just(response.mutate().body(new String(body, StandardCharsets.UTF_8)).build());
        });
    }
}
