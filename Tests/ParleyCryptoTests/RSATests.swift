import ParleyCrypto
import Testing

@Suite("RS256 (RSASSA-PKCS1-v1_5 + SHA-256)")
struct RSATests {
    /// A key made with `openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048`.
    static let opensslKey = """
        -----BEGIN PRIVATE KEY-----
        MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDwVr160Yl3tNXW
        pgT3yyXdhKqxuE3+YikegbOn+O3wmD7/Fge5T+jjVLPrM/6+07n+o/TfMYI1ng6W
        6TFJ6l7pWihWSb9a91GumKT3V3bFqsWfNPVnLKjgU5ZRGNzKPpU6gClXODMKO0YR
        c0vXgnL7jpEG5bCR+bO5WzhdNHnWdeLx4eqb0Xsx69FRJUqpB4PRxc5UXauCixgX
        yuJ61EG8Q8ln7FtfwrQq5s5PJsmTiTQ78MxTiTidS4Bx/85yKPZ61oGpqhHTIO3d
        IXNx/I0jbtsJdn0YAAJeyYYG0UQGgiJ0buk8C6Ci8nHyYmHohmyNpM/qCjfCLiLR
        vxfxuSJRAgMBAAECggEABZMngQ+wjssOQ9s7coSyPHray3V9JqbmSzk8OCvBpJLt
        fcG04zWOFZoMTdezPSZgkjfn1enT5yejF3Kx8SpbWJhkWhY+FtXovY8E6/rwOMcC
        +Q2zpj8YLQYdu2rjMgERxlOwEc0H8kDveXeZW7BNXgkseaxBt4ZP07KT9aW1cHxl
        fJivW845aHDJVIKbNTbZvYlMaoi0x8aZUGLG0ss9u89IPezprqvga9taXqrPOVTp
        dtg+IBsUPVcMMTzHabgBqkyi/RiYRMGCM3KAnDo2dIu25vCu31qQxzjIbSAOr4J1
        3R/YwKL3/zFuNIzNB4FwoWO1kYs/GRYkZt/gZ1boeQKBgQD8XUnbUX3+jLC4WbW8
        9+C2GLtEn3YpV3siZ5axELlYCjVZvCHObuaCaR3Un40HFg9oKIbSyF+a1vZ5lMJM
        xDkh1EJ7kNveYlLtKGU/nwK3070WHJyqTrvcUJrPM3TmILQsozf2CR7ULsf4Unn0
        TOD66halVY0YPrsLYzIqTlHE+QKBgQDzzRoKKgIuJ7avHB2tgg5/jY/NWjMOJHs4
        fdlhgJe8aHDvH+QHRlKNcAfGuFCPrBZnKgqxpiPHGw+2IXosVou0uIM+np7GzOc4
        QapuOq6lE0+IURCi0KLDknBmSUHiQRqq3lGZZ+AVOOv8WHMpMqt6r34XTlFFzW4Z
        sr+WUKuWGQKBgHiM75zunqsb9cb6Q5BTMGqMAdjT+5PgEBftN9S5UnA14CpPbi64
        VzBwmilZVfrOlOmCgnTp9pF2oiKN5wrYqRn51RBFsGHYwhg7tbHgeWHqqWaIoGXS
        WnbxoiHcSLktYiP4i+DhlnJxLmD2tP74QnhZnhu4dD/ip2LXLb170B+xAoGALw0e
        QWfqE85GS3U5pQq8kZFYd2E5CTmxLi3bjh2rKwldAkk9UMoZlIJSfd+EbLXhfPd4
        KODPdtWaKqQ7V+M8Axy495TVP7i7xvelVLCuk90uNDiw5Tsurl/MoXDx7iBybReK
        1/hcHrxljsXjM8g7n+nOg+Dxfm8vGHaO0wuukcECgYEAm/Dz1vM+Cwe/O9GOCPf1
        EWwfYcthXR821qoy/QypwaHGROmcruGuFcVH+PZV8SX6J67VtWdhIjLHRAoDavGX
        wuES21TypVdGQHszr631ol6mFpJf2K1aPt7j9Pdzm6DYOv79RLtXVdWqsEGK66vo
        HM7BBKawIIOxYMl9QTwPvHs=
        -----END PRIVATE KEY-----
        """
    /// `printf 'parley rs256 test vector' | openssl dgst -sha256 -sign key.pem | base64`: PKCS #1 v1.5 signatures
    /// are deterministic, so OpenSSL's command line and this library must agree byte for byte.
    static let opensslSignature =
        "6VPCYkjG/N2bn6WOPKcgg2nfqmazLtYf7klnY2KFjafzzARA65HUOBKZ56lE//t8Wzx13x8hRpFQC6VX9zQLVc22oyfC5V+e8/t4YhY7FssMq+y/M6GN1J0DtVlSzCBEq5wnxXWONOJjLx7vQuqqv2phiFv9mdWdX2MdYV9NhDLEPCezdINSM2l8VoE3Lw1o4+OSIsPP1+wBiu/Vcs2XAoYJrZyvU/b6lvY+k2gG61RiSBpEMZvYqKciM6VEi3kXAbf7ySge035URCXnDFp4Y0kVJcLB7fCISQYxr3Uf71Al0bNTmD1AeOL7rKr37vrJXM7OgQEtl1BqEBu7MWezpw=="

    @Test func signsAsOpenSSLsCommandLineDoes() throws {
        let key = try RSA.SigningKey(pem: Self.opensslKey)
        let message = Array("parley rs256 test vector".utf8)
        let signature = try key.sign(message)
        #expect(Base64.encode(signature) == Self.opensslSignature)
        #expect(key.verifyingKey.verify(signature: signature, for: message))
        #expect(!key.verifyingKey.verify(signature: signature, for: Array("another message".utf8)))
        var flipped = signature
        flipped[0] ^= 1
        #expect(!key.verifyingKey.verify(signature: flipped, for: message))
    }

    @Test func signsJWTsThatVerify() throws {
        let key = try RSA.SigningKey.generate()
        struct Claims: Codable, Equatable {
            var iss: String
            var exp: Int
        }
        let token = try JWT.signRS256(header: ["kid": "k1"], claims: Claims(iss: "a@b", exp: 10), key: key)
        let (header, claims) = try JWT.verifyRS256(token, key: key.verifyingKey)
        #expect(String(decoding: header, as: UTF8.self) == #"{"alg":"RS256","kid":"k1","typ":"JWT"}"#)
        #expect(String(decoding: claims, as: UTF8.self) == #"{"exp":10,"iss":"a@b"}"#)
        #expect(throws: JWTError.badSignature) {
            try JWT.verifyRS256(token, key: try RSA.SigningKey.generate().verifyingKey)
        }
        #expect(throws: JWTError.malformed) { try JWT.verifyRS256("a.b", key: key.verifyingKey) }
    }

    @Test func refusesKeysThatAreNotRSAOf2048Bits() throws {
        #expect(throws: CryptoError.invalidKeyFormat("an RSA key shorter than 2048 bits")) {
            try RSA.SigningKey(pem: Self.shortKey)
        }
        #expect(throws: CryptoError.invalidKeyFormat("not an RSA key")) {
            try RSA.SigningKey(pem: try P256.SigningKey.generate().pem)
        }
        #expect(throws: CryptoError.invalidKeyFormat("not a PEM private key")) { try RSA.SigningKey(pem: "hello") }
        #expect(throws: CryptoError.invalidKeyFormat("not a PEM public key")) {
            try RSA.VerifyingKey(pem: Self.opensslKey)
        }
        // The PEM round trip keeps the key.
        let key = try RSA.SigningKey(pem: Self.opensslKey)
        #expect(try RSA.SigningKey(pem: key.pem).pem == key.pem)
    }

    static let shortKey = """
        -----BEGIN PRIVATE KEY-----
        MIICdwIBADANBgkqhkiG9w0BAQEFAASCAmEwggJdAgEAAoGBAKMDwWQMtYOnQUvu
        PMGft+pqpL46C5lzk6G2ovo1987mvC2oyZZXSkFJGubNyB/jFTKcabUNs5p6X46T
        e2aoYDk6j4i8CO3DjdkIOW43Yq9pB/chX8TGM8JzI8cvfsNlwyq5V2xMGilnRpCO
        U0Qi7UChoFafEW0PTSnKDxoOIGX9AgMBAAECgYEAgpv2rg/UuygeFBVMjqJGvEY3
        usZNFuTYa2Am0qy84QRTz42F/rPvpcFKEZTc/Fd4W3Wg6FSTC3ly6IxX+dd8R/Yq
        Br4RlIeZ/gHglPW/wywXWJS9yWJoaIC/Ed1gqhTHwmNlaq2QdAV7e+NkOWMLrQE/
        DVvvER5HtgS7hQbzes0CQQDYyw0LIetFomeaohdLJvH+viu4G4lxMxy4TMzWTe0w
        sm3KgKTi9IhBWTwNixO2f9MuZ6NaPhWIhpKNEbuNPx4vAkEAwH7nDj1OM0uDi6jU
        BxQTC/AYMpZvO+85KikrJgV2nnEr9WqyZKa53JRr20rayCCwcBYbTxnJIBtCdWKc
        qDO/kwJAX8geZCvBQcvGEGjK99YmFtG4iSgJam0VpEuyOIDHabt7jHuX3foB9TVS
        tf0bYYdKK3d4kZdadi5Ws2MBRR982wJBAJBOEhTArKETmRfXhquPxv+KC/nQgK7j
        lW0f07L7IYOBv7yJMhb2ThsoQPryULT6nIpKaEqSQA6LoPSy6lHGCXUCQAXIdQEX
        IdlR5jebF1E3Fmqo1TH+3blN5bhK66o6r9TSSy1uTCk+RbZIhtkHMM61WQ+77YIv
        xmx8ZlJYyPqeJHc=
        -----END PRIVATE KEY-----
        """
}
