package dev.lease.fence.http;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Optional;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

import dev.lease.FencingToken;
import dev.lease.LeaseContext;
import dev.lease.fence.StaleTokenException;

/**
 * For {@code RestClient} and {@code RestTemplate}: a request sent inside a leased section carries the lease's
 * {@code Fencing-Token}, and a 409 stale-token answer is thrown as {@link StaleTokenException}. Both clients run
 * interceptors on the calling thread, where the lease is bound. A header the caller set itself is left alone.
 */
final class FencingTokenRequestInterceptor implements ClientHttpRequestInterceptor {

    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
            throws IOException {
        Optional<FencingToken> token = LeaseContext.findToken();
        if (token.isEmpty() || request.getHeaders().containsHeader(FencingTokenHeader.NAME)) {
            return execution.execute(request, body);
        }
        Optional<String> header = FencingTokenHeader.formatForClients(token.get());
        if (header.isEmpty()) {
            return execution.execute(request, body);
        }
        request.getHeaders().set(FencingTokenHeader.NAME, header.get());
        return refuseStale(execution.execute(request, body), token.get());
    }

    /** Throws the stale-token refusal; any other answer goes back to the client as it came (its body re-readable). */
    private static ClientHttpResponse refuseStale(ClientHttpResponse response, FencingToken sent) throws IOException {
        if (response.getStatusCode().value() != 409
                || !FencingProblems.isProblemJson(response.getHeaders().getFirst(HttpHeaders.CONTENT_TYPE))) {
            return response;
        }
        byte[] body;
        try (InputStream in = response.getBody()) {
            body = in.readNBytes(FencingProblems.MAX_BODY + 1);
        }
        Optional<StaleTokenException> stale = body.length > FencingProblems.MAX_BODY ? Optional.empty()
                : FencingProblems.readStale(body, sent);
        if (stale.isPresent()) {
            response.close();
            throw stale.get();
        }
        return new Buffered(response, body);
    }

    /** The answer with its body already read. */
    private record Buffered(ClientHttpResponse response, byte[] body) implements ClientHttpResponse {

        @Override
        public HttpStatusCode getStatusCode() throws IOException {
            return response.getStatusCode();
        }

        @Override
        public String getStatusText() throws IOException {
            return response.getStatusText();
        }

        @Override
        public HttpHeaders getHeaders() {
            return response.getHeaders();
        }

        @Override
        public InputStream getBody() {
            return new ByteArrayInputStream(body);
        }

        @Override
        public void close() {
            response.close();
        }
    }
}
