// The scanner's camera: frames of the device's camera read for QR codes, by the browser's
// BarcodeDetector where it has one for QR codes, else by jsQR (vendored: `vendor/jsqr`,
// loaded by the page as a classic script that defines `jsQR`).

// A code in front of the camera is read again only after it was out of view this long.
const SAME_CODE_MS = 3000;

// Starts the camera into `video` and reads its frames: `read(text)` hears each code come
// into view (a code that stays in view is heard once), except while `paused()`. Answers the
// decoder used ("BarcodeDetector" or "jsQR"), or null after `failed(why)` when there is no
// camera to use.
export async function watch(video, { failed, paused, read }) {
  try {
    const stream = await navigator.mediaDevices.getUserMedia({
      audio: false,
      video: { facingMode: "environment", width: { ideal: 1280 }, height: { ideal: 720 } },
    });
    video.srcObject = stream;
    await video.play();
  } catch (e) {
    failed("No camera: " + (e.name === "NotAllowedError" ? "the browser was not allowed to use it." : "none was found.") + " Type or paste codes below.");
    return null;
  }
  const detector = await qrDetector();
  const canvas = document.createElement("canvas");
  const context = canvas.getContext("2d", { willReadFrequently: true });
  let lastCode = null, lastCodeAt = 0;
  const frame = async () => {
    if (video.readyState >= 2) {
      const text = detector ? await detected(detector, video) : decoded(video, canvas, context);
      const now = Date.now();
      // A code still in view is not read again: it is read again once it was out of view
      // a moment, or after another one.
      const again = text && text === lastCode && now - lastCodeAt < SAME_CODE_MS;
      if (text) lastCodeAt = now;
      if (text && !again && !paused()) {
        lastCode = text;
        await read(text);
      }
    }
    setTimeout(frame, 120);
  };
  frame();
  return detector ? "BarcodeDetector" : "jsQR";
}

async function qrDetector() {
  if (!("BarcodeDetector" in window)) return null;
  try {
    const formats = await window.BarcodeDetector.getSupportedFormats();
    return formats.includes("qr_code") ? new window.BarcodeDetector({ formats: ["qr_code"] }) : null;
  } catch (_) {
    return null;
  }
}

async function detected(detector, video) {
  try {
    const codes = await detector.detect(video);
    return codes.length ? codes[0].rawValue : null;
  } catch (_) {
    return null;
  }
}

// One frame through jsQR, at most 800 pixels wide.
function decoded(video, canvas, context) {
  const scale = Math.min(1, 800 / video.videoWidth);
  canvas.width = Math.round(video.videoWidth * scale);
  canvas.height = Math.round(video.videoHeight * scale);
  context.drawImage(video, 0, 0, canvas.width, canvas.height);
  const image = context.getImageData(0, 0, canvas.width, canvas.height);
  const code = window.jsQR(image.data, image.width, image.height, { inversionAttempts: "dontInvert" });
  return code ? code.data : null;
}
